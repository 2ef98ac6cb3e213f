#!/usr/bin/env python3
"""Prints `<words> words, <lines> lines` for a file, or for standard input."""
import sys

text = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) > 1 else sys.stdin.read()
print(f"{len(text.split())} words, {len(text.splitlines())} lines")
