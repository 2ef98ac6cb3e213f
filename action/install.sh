#!/usr/bin/env bash
# The GitHub Action's (action.yml) install steps, on a Linux runner.
#
#   install.sh assay        # the release binary, else `cargo install`; its folder goes on $GITHUB_PATH
#   install.sh bubblewrap   # apt, then make it work on Ubuntu 24.04 (AppArmor), then prove it
#   install.sh agent        # the agent CLI named by INPUT_AGENT, pinned, from npm
#
# Inputs arrive as environment variables, never as text of the script (GitHub's rule against
# script injection), and are checked before any use:
#
#   INPUT_VERSION      assay's version (`0.1.0`, `v0.1.0`) or `latest`; empty: the action's own ref
#                      when it is a release tag (`uses: owner/assay@v0.1.0`), else `latest`
#   ACTION_REPOSITORY  github.action_repository (owner/name): where the releases are
#   ACTION_REF         github.action_ref
#   INPUT_AGENT        claude-code@X.Y.Z, codex@X.Y.Z or gemini-cli@X.Y.Z
#
# The release binary comes from cargo-dist's shell installer,
# https://github.com/<repository>/releases/download/v<version>/assay-evals-installer.sh
# (…/releases/latest/download/… for `latest`), installed unmanaged into one folder. When that
# fails (no release for this platform, GitHub unreachable), `cargo install --locked assay-evals`
# builds it (the same version; needs Rust, which GitHub's Ubuntu runners have). Used as a local
# action (`uses: ./` in assay's own repository: no action repository), it builds the action's
# own checkout (`cargo install --locked --path`), so a pull request tests its own code.
#
# Where the system lives is overridable, for tests: ASSAY_INSTALL_ROOT (default
# $RUNNER_TEMP/assay-evals), ASSAY_APPARMOR_D (/etc/apparmor.d), ASSAY_USERNS_RESTRICT
# (/proc/sys/kernel/apparmor_restrict_unprivileged_userns).
set -euo pipefail

# shellcheck source=action/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

step() { printf '==> %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# Appends a folder to PATH for this step and every later one.
add_path() {
  export PATH="$1:$PATH"
  if [ -n "${GITHUB_PATH:-}" ]; then printf '%s\n' "$1" >>"$GITHUB_PATH"; fi
}

semver='^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$'

install_assay() {
  local version=${INPUT_VERSION:-} repo=${ACTION_REPOSITORY:-} ref=${ACTION_REF:-}
  local root=${ASSAY_INSTALL_ROOT:-${RUNNER_TEMP:-${TMPDIR:-/tmp}}/assay-evals}
  local bin="$root/bin"
  local from_path=""

  if [ -z "$version" ]; then
    if [[ $ref =~ $semver ]]; then
      version=$ref
    elif [ -z "$repo" ] && [ -f "${GITHUB_ACTION_PATH:-}/Cargo.toml" ] &&
      grep -q '^name = "assay-evals"' "$GITHUB_ACTION_PATH/Cargo.toml"; then
      from_path=$GITHUB_ACTION_PATH
    else
      version=latest
    fi
  fi
  if [ -n "$version" ] && [ "$version" != latest ] && ! [[ $version =~ $semver ]]; then
    fail "input version must be a release (0.1.0, v0.1.0) or latest, got: $version" 2
  fi
  if [ -n "$repo" ] && ! [[ $repo =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]]; then
    fail "github.action_repository is not owner/name: $repo" 2
  fi

  mkdir -p "$bin"
  if [ -n "$from_path" ]; then
    step "assay from the action's own checkout ($from_path)"
    cargo install --locked --root "$root" --path "$from_path"
  else
    local url="" cargo_version=()
    if [ "$version" = latest ]; then
      [ -z "$repo" ] || url="https://github.com/$repo/releases/latest/download/assay-evals-installer.sh"
    else
      [ -z "$repo" ] || url="https://github.com/$repo/releases/download/v${version#v}/assay-evals-installer.sh"
      cargo_version=(--version "${version#v}")
    fi
    local installed=""
    if [ -n "$url" ]; then
      step "assay $version: the release binary ($url)"
      local installer
      installer=$(mktemp)
      if curl --proto '=https' --tlsv1.2 -fsSL --retry 3 "$url" -o "$installer" &&
        ASSAY_EVALS_UNMANAGED_INSTALL="$bin" ASSAY_EVALS_NO_MODIFY_PATH=1 \
          INSTALLER_NO_MODIFY_PATH=1 sh "$installer" && [ -x "$bin/assay" ]; then
        installed=yes
      else
        echo "the release binary could not be installed; building it from crates.io instead"
      fi
      rm -f "$installer"
    fi
    if [ -z "$installed" ]; then
      command -v cargo >/dev/null 2>&1 ||
        fail "no release binary, and no cargo to build assay: add a Rust toolchain (dtolnay/rust-toolchain@stable) before this action"
      step "assay $version: cargo install --locked assay-evals"
      cargo install --locked --root "$root" "${cargo_version[@]}" assay-evals
    fi
  fi
  [ -x "$bin/assay" ] || fail "assay was not installed in $bin"
  add_path "$bin"
  assay --version
}

install_bubblewrap() {
  [ "$(uname -s)" = Linux ] ||
    fail "assay's sandbox (bubblewrap) needs a Linux runner; on macOS it is planned (docs/running.md#the-sandbox)"
  if ! command -v bwrap >/dev/null 2>&1; then
    step "bubblewrap (apt)"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap
  fi
  bwrap --version
  probe() { bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc true; }
  if probe 2>/dev/null; then
    echo "bubblewrap works"
    return
  fi
  # Ubuntu 23.10 and later (GitHub's ubuntu-24.04) restrict unprivileged user namespaces through
  # AppArmor: a profile that lets bwrap make them (docs/running.md#the-sandbox), else the sysctl.
  local restrict=${ASSAY_USERNS_RESTRICT:-/proc/sys/kernel/apparmor_restrict_unprivileged_userns}
  local apparmor_d=${ASSAY_APPARMOR_D:-/etc/apparmor.d}
  if [ "$(cat "$restrict" 2>/dev/null)" = 1 ]; then
    local bwrap_path
    bwrap_path=$(readlink -f "$(command -v bwrap)")
    if command -v apparmor_parser >/dev/null 2>&1; then
      step "an AppArmor profile for $bwrap_path (unprivileged user namespaces)"
      printf '%s\n' 'abi <abi/4.0>,' 'include <tunables/global>' \
        "profile bwrap $bwrap_path flags=(unconfined) {" '  userns,' '}' |
        as_root tee "$apparmor_d/bwrap" >/dev/null
      as_root apparmor_parser -r "$apparmor_d/bwrap" || true
      if probe 2>/dev/null; then
        echo "bubblewrap works"
        return
      fi
    fi
    step "sysctl kernel.apparmor_restrict_unprivileged_userns=0 (the profile was not enough)"
    as_root sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || true
  fi
  if ! probe; then
    fail "bubblewrap cannot make its sandbox on this runner (see the error above and docs/running.md#the-sandbox); assay run would exit 3"
  fi
  echo "bubblewrap works"
}

install_agent() {
  local spec=${INPUT_AGENT:-}
  [ -n "$spec" ] || return 0
  local name=${spec%%@*} version="" package command
  [ "$name" = "$spec" ] || version=${spec#*@}
  case $name in
    claude-code) package=@anthropic-ai/claude-code command=claude ;;
    codex) package=@openai/codex command=codex ;;
    gemini-cli | gemini) package=@google/gemini-cli command=gemini ;;
    *) fail "input agent: unknown agent CLI '$name' (claude-code, codex or gemini-cli, each @version)" 2 ;;
  esac
  if ! [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
    fail "input agent must pin a version (e.g. $name@1.2.3), got: $spec" 2
  fi
  step "$package@$version (npm)"
  npm install --global --no-audit --no-fund "$package@$version"
  "$command" --version
}

case ${1:-} in
  assay) install_assay ;;
  bubblewrap) install_bubblewrap ;;
  agent) install_agent ;;
  *) fail "usage: install.sh assay|bubblewrap|agent (got '${1:-}')" 2 ;;
esac
