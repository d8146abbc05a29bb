#!/usr/bin/env bash
# Makes the demo's BIMI material into fixtures/demo-bimi/ (or the folder given): scripts/make-demo-bimi.ts,
# which makes it with the BIMI lab's openssl steps (packages/engine/test/bimi/authority.ts). Run once;
# the output is committed (the keys of the authorities are not).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec "$root/node_modules/.bin/tsx" "$root/scripts/make-demo-bimi.ts" "$@"
