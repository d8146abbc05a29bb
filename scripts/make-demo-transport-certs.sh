#!/usr/bin/env bash
# Makes the demo's test certificate authority and its transport responders' certificates into
# fixtures/demo-transport/ (or the folder given): scripts/make-demo-transport-certs.ts, which makes
# them with the BIMI lab's TLS authority steps (packages/engine/test/bimi/authority.ts). Run once;
# the output is committed (the authority's key is not). Then run scripts/sign-demo-zones.sh: the
# TLSA record of dnssec-secure.example pins good.pem's key.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
exec "$root/node_modules/.bin/tsx" "$root/scripts/make-demo-transport-certs.ts" "$@"
