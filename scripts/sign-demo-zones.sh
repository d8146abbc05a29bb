#!/usr/bin/env bash
# Makes the demo's signed zones (issue 42 item 3) into fixtures/demo-dnssec/: a demo root `.` whose
# key is the demo's trust anchor (root-anchor.ds; nothing but the demo trusts it), the `example.` TLD,
# and three demo domains, one per DNSSEC state:
#   dnssec-secure.example    signed, DS at example.: secure; its MX carries a TLSA record (DANE-EE
#                            3 1 1) for the key of the demo's own mail server (fixtures/demo-transport/good.pem)
#   dnssec-bogus.example     signed, DS at example., but its signatures expired in February 2024: bogus
#                            (EDE 7); the fix is to sign again (and keep re-signing automatically)
#   dnssec-insecure.example  unsigned, delegated without a DS (example.'s NSEC proves it): insecure
# The same records, unsigned, go to fixtures/zones/ (what `--demo-zones` and the demo check read);
# the signed copies are what the demo validates against. Signatures: 2025-01-01 → 2045-01-01
# (test/zones/demo-dnssec.test.ts checks they outlast the tests). Run only to rebuild the set.
#
# Needs Debian `ldnsutils` (ldns-keygen, ldns-signzone, ldns-key2ds) and `openssl`.
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in ldns-keygen ldns-signzone ldns-key2ds openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install ldnsutils openssl" >&2; exit 1; }
done

out=fixtures/demo-dnssec
rm -rf "$out/zones" "$out/keys"
mkdir -p "$out/zones" "$out/keys"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

INCEPTION=20250101000000
EXPIRATION=20450101000000
# The DANE record of the demo's mail server: SHA-256 of its public key (RFC 6698 §2.1: 3 1 1).
TLSA311=$(openssl x509 -in fixtures/demo-transport/good.pem -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -hex | awk '{print $NF}')
DKIM='( "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAk+mjduhdX02iGnjPBu9dT1XuGFGy+g/M6QcwTMSsLs3IboMJia8OMVoEnEAV66BSEpFQI+Vp6op1SQbL/iyNtZhbMItSdMgX6Wij6upEqggnR0r+h/P/r+AMXYuhWhLfA2FOZEg7yKqetTNZfHuORufBYaMuAzlLYmAySLPzwR49OfclgfNjWRHNwqdg" "DzlUYMxCEUilA9dVaxJznh+Y0oN+umbcMdCXqUkVfbeEZv13sWjMfSNXYV/pCh6lC+FFEnkWqT74UchJmg8BFWPiR0S7ThkOG3gycijqH3j7kQJtpcsrQIvkmCV0phoZLdVhNtGv+7HPGoEiJSzE5UDxSQIDAQAB" )'

keygen() { # ZONE: a KSK and a ZSK (ECDSA P-256) in $work/keys/ZONE/
  local dir="$work/keys/$1"
  mkdir -p "$dir"
  (cd "$dir" && ldns-keygen -a ECDSAP256SHA256 -k "$1" >ksk && ldns-keygen -a ECDSAP256SHA256 "$1" >zsk)
}
ksk() { echo "$work/keys/$1/$(cat "$work/keys/$1/ksk")"; }
zsk() { echo "$work/keys/$1/$(cat "$work/keys/$1/zsk")"; }
ds() { ldns-key2ds -n -2 "$(ksk "$1").key" | sed 's/;.*//'; }
sign() { # ZONE FILE OUT [INCEPTION EXPIRATION]
  ldns-signzone -i "${4:-$INCEPTION}" -e "${5:-$EXPIRATION}" -f "$3" "$2" "$(ksk "$1")" "$(zsk "$1")"
}

# child NAME COMMENT MX-BLOCK: the demo domain's zone (the baseline company, p=reject).
child() {
  cat <<EOF
; Demo DNSSEC domain: $2
; Made by scripts/sign-demo-zones.sh with its signed copy in fixtures/demo-dnssec/zones/.
\$ORIGIN $1.
\$TTL 3600
@                       IN SOA   ns1.dns.example. hostmaster.$1. ( 2026120701 7200 900 1209600 300 )
                        IN NS    ns1.dns.example.
                        IN NS    ns2.dns.example.
                        IN MX    10 mx
                        IN TXT   "v=spf1 ip4:198.51.100.24/29 -all"
$3
_dmarc                  IN TXT   "v=DMARC1; p=reject; rua=mailto:dmarc-reports@$1"
dkim._domainkey         IN TXT   $DKIM
EOF
}

child dnssec-secure.example "signed, with a chain of trust from the demo's root key: secure; DANE on its MX" \
  "mx                      IN A     127.0.0.2
_25._tcp.mx             IN TLSA  3 1 1 $TLSA311
_smtp._tls              IN TXT   \"v=TLSRPTv1; rua=mailto:tls-reports@dnssec-secure.example\"" >"$work/dnssec-secure.example.zone"
child dnssec-bogus.example "signed, but its signatures expired in February 2024: bogus until it is signed again" \
  "mx                      IN A     198.51.100.25" >"$work/dnssec-bogus.example.zone"
child dnssec-insecure.example "not signed, and its parent says so (no DS): insecure" \
  "mx                      IN A     198.51.100.25" >"$work/dnssec-insecure.example.zone"

keygen dnssec-secure.example
keygen dnssec-bogus.example
sign dnssec-secure.example "$work/dnssec-secure.example.zone" "$out/zones/dnssec-secure.example.signed"
sign dnssec-bogus.example "$work/dnssec-bogus.example.zone" "$out/zones/dnssec-bogus.example.signed" 20240101000000 20240201000000
cp "$work/dnssec-insecure.example.zone" "$out/zones/dnssec-insecure.example.zone"
for name in dnssec-secure dnssec-bogus dnssec-insecure; do cp "$work/$name.example.zone" "fixtures/zones/$name.example.zone"; done

# example.: the demo TLD (only the delegations of the DNSSEC demo domains), NSEC.
keygen example
{
  cat <<EOF
\$ORIGIN example.
\$TTL 3600
@ 3600 IN SOA ns1.dns.example. hostmaster.dns.example. 2026120701 7200 900 1209600 300
@ 3600 IN NS ns1.dns.example.
dnssec-secure.example. 3600 IN NS ns1.dns.example.
dnssec-bogus.example. 3600 IN NS ns1.dns.example.
dnssec-insecure.example. 3600 IN NS ns1.dns.example.
EOF
  ds dnssec-secure.example
  ds dnssec-bogus.example
} >"$work/example.zone"
sign example "$work/example.zone" "$out/zones/example.signed"

# .: the demo root; its KSK is the demo's trust anchor.
keygen .
{
  cat <<EOF
\$ORIGIN .
\$TTL 86400
. 86400 IN SOA ns1.dns.example. hostmaster.dns.example. 2026120701 1800 900 604800 86400
. 86400 IN NS ns1.dns.example.
example. 86400 IN NS ns1.dns.example.
EOF
  ds example
} >"$work/root.zone"
sign . "$work/root.zone" "$out/zones/root.signed"

ds . >"$out/root-anchor.ds"
cp -r "$work/keys/." "$out/keys/"
echo "signed $(ls "$out/zones" | wc -l) zones into $out/zones; the demo's trust anchor: $out/root-anchor.ds"
