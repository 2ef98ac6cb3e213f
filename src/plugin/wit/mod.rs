//! The WIT interface, one module per version (as Zed's extension host keeps them): each
//! frozen once released, so a plugin built against any released version keeps loading.

pub mod since_v0_1_0;

/// The version the host's own code speaks (checks, harnesses, formats). A new version becomes
/// `current`; older ones stay, adapted to it where they are loaded.
pub use since_v0_1_0 as current;

/// The WIT versions this host loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WitVersion {
    V0_1_0,
}

/// The version [`current`] implements: what new plugins target.
pub const CURRENT: WitVersion = WitVersion::V0_1_0;

impl WitVersion {
    /// The package version, as `wit/<version>/` and the plugin's imports name it.
    pub const fn as_str(self) -> &'static str {
        match self {
            WitVersion::V0_1_0 => "0.1.0",
        }
    }
}
