#!/bin/sh
# self-test.sh - check-layout.py catches each broken rule in a small tree (and passes the tree unbroken).
exec python3 "$(dirname "$0")/check-layout.py" --self-test
