#!/bin/sh
# A deterministic stand-in for an agent: reads the prompt on stdin, follows the greeting command
# (writes greeting.txt) and replies. No network, no credentials.
prompt=$(cat)
name=$(printf '%s' "$prompt" | sed -n -e 's|^/greeting \([A-Z][A-Za-z]*\).*|\1|p' -e 's|.* for \([A-Z][A-Za-z]*\).*|\1|p' | head -n 1)
[ -n "$name" ] || name=world
if [ -f .claude/commands/greeting.md ]; then
  printf 'Hello, %s!\n' "$name" > greeting.txt
  echo "Wrote greeting.txt for $name."
else
  echo "I don't know how to write greeting cards."
fi
