# What action/install.sh and action/run.sh share: errors as GitHub workflow commands.

# A workflow command's message, escaped as GitHub's toolkit escapes it (an input cannot end the
# command or start another).
escape() {
  local s=${1//'%'/%25}
  s=${s//$'\r'/%0D}
  printf '%s' "${s//$'\n'/%0A}"
}

# `fail MESSAGE [CODE]`: an `::error` annotation, then exit CODE (default 1).
fail() {
  printf '::error title=assay action::%s\n' "$(escape "$1")"
  exit "${2:-1}"
}
