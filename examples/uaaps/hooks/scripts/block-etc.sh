#!/bin/sh
# Blocks writes under /etc: exit code 2 tells the agent the tool call was denied.
if grep -q '"file_path": *"/etc/' ; then
  echo "writes to /etc are not allowed" >&2
  exit 2
fi
exit 0
