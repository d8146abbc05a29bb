#!/usr/bin/env bash
# Makes the signed DNSSEC fixture zones under fixtures/dnssec/ (issue 31): a test root `.`, the TLD
# `test.` and one child zone per case (valid NSEC and NSEC3, each algorithm, expired and future
# signatures, DS mismatch, missing DNSKEY, missing RRSIG, tampered data, wrong signer, unsigned
# delegation, unsupported algorithm and digest, NSEC3 opt-out and 200 iterations, wildcards, CNAMEs
# into an insecure and into a bogus zone, TLSA records). The output is committed with its test keys
# and the root's trust anchor, so the tests never sign: run this only to rebuild the set (new keys,
# new signatures; every test that reads fixtures/dnssec then still passes, as none pins a signature).
#
# Needs Debian `ldnsutils` (ldns-keygen, ldns-signzone, ldns-key2ds) and `openssl`.
# Windows: 2025-01-01 → 2035-01-01 unless a case says otherwise (expired: 2020; future: 2040).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in ldns-keygen ldns-signzone ldns-key2ds openssl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install ldnsutils openssl" >&2; exit 1; }
done

out=fixtures/dnssec
rm -rf "$out/zones" "$out/keys" "$out/certs" "$out/unsigned"
mkdir -p "$out/zones" "$out/keys" "$out/certs" "$out/unsigned"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

INCEPTION=20250101000000
EXPIRATION=20350101000000

# The certificate of the MX hosts, for the TLSA records (DANE-EE 3 1 1 of its public key).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
  -subj "/CN=mx1.secure-nsec.test" -keyout "$out/certs/mx1.key" -out "$out/certs/mx1.pem" 2>/dev/null
TLSA311=$(openssl x509 -in "$out/certs/mx1.pem" -noout -pubkey | openssl pkey -pubin -outform DER | openssl dgst -sha256 -hex | awk '{print $NF}')

# keygen ZONE ALGORITHM [BITS]: a KSK and a ZSK in $work/ZONE/; prints nothing.
keygen() {
  local zone=$1 alg=$2 bits=${3:-} dir="$work/keys/$1"
  mkdir -p "$dir"
  local size=()
  [ -n "$bits" ] && size=(-b "$bits")
  (cd "$dir" && ldns-keygen -a "$alg" "${size[@]}" -k "$zone" >ksk && ldns-keygen -a "$alg" "${size[@]}" "$zone" >zsk)
}
ksk() { echo "$work/keys/$1/$(cat "$work/keys/$1/ksk")"; }
zsk() { echo "$work/keys/$1/$(cat "$work/keys/$1/zsk")"; }
# ds ZONE [DIGEST-FLAG]: the DS of the zone's KSK (SHA-256 unless -1 or -4 is given), one line.
ds() { ldns-key2ds -n "${2:--2}" "$(ksk "$1").key" | sed 's/;.*//'; }

# child ZONE: the records every child zone holds (SPF, DMARC, MX, the MX host and its TLSA, a
# wildcard, an address, a name two labels down).
child() {
  local zone=$1
  cat <<EOF
\$ORIGIN $zone.
\$TTL 3600
@ 3600 IN SOA ns1.test. hostmaster.$zone. 2025010101 7200 3600 1209600 300
@ 3600 IN NS ns1.test.
@ 3600 IN MX 10 mx1.$zone.
@ 3600 IN TXT "v=spf1 ip4:192.0.2.0/24 -all"
_dmarc 3600 IN TXT "v=DMARC1; p=reject; rua=mailto:dmarc@$zone"
mx1 3600 IN A 127.0.0.1
_25._tcp.mx1 3600 IN TLSA 3 1 1 $TLSA311
*.wild 3600 IN TXT "wildcard"
www 3600 IN A 192.0.2.1
a.b.deep 3600 IN A 192.0.2.2
EOF
}

# sign ZONE FILE OUT [ldns-signzone options...]: signs with the zone's keys, one RR per line.
sign() {
  local zone=$1 file=$2 target=$3
  shift 3
  ldns-signzone -i "$INCEPTION" -e "$EXPIRATION" "$@" -f "$target" "$file" "$(ksk "$zone")" "$(zsk "$zone")"
}

# Children: name, algorithm, bits, signing options.
declare -A ALG=(
  [secure-nsec]=ECDSAP256SHA256 [secure-nsec3]=ECDSAP256SHA256
  [alg5]=RSASHA1 [alg7]=RSASHA1-NSEC3-SHA1 [alg8]=RSASHA256 [alg10]=RSASHA512 [alg13]=ECDSAP256SHA256
  [alg14]=ECDSAP384SHA384 [alg15]=ED25519 [alg16]=ED448
  [expired]=ECDSAP256SHA256 [future]=ECDSAP256SHA256 [ds-mismatch]=ECDSAP256SHA256
  [no-dnskey]=ECDSAP256SHA256 [no-rrsig]=ECDSAP256SHA256 [tampered]=ECDSAP256SHA256
  [wrong-signer]=ECDSAP256SHA256 [unsupported-alg]=ECDSAP256SHA256 [unsupported-digest]=ECDSAP256SHA256
  [optout]=ECDSAP256SHA256 [iter200]=ECDSAP256SHA256 [cname]=ECDSAP256SHA256 [mx-cname]=ECDSAP256SHA256
)
declare -A OPTS=(
  [secure-nsec3]="-n -t 0" [alg7]="-n -t 0" [optout]="-n -t 0 -p" [iter200]="-n -t 200 -s abcd"
)
children=("${!ALG[@]}")
IFS=$'\n' children=($(sort <<<"${children[*]}")); unset IFS

tld_delegations=""
for name in "${children[@]}"; do
  zone="$name.test"
  alg=${ALG[$name]}
  bits=""
  case "$alg" in RSA*) bits=2048 ;; esac
  keygen "$zone" "$alg" "$bits"
  child "$zone" >"$work/$zone.zone"
  case "$name" in
    cname)
      # CNAMEs from a secure zone into an insecure one and into a bogus one (RFC 4035 §5.3: each
      # RRset of the chain is validated in its own zone; the weakest link counts).
      echo "to-insecure 3600 IN CNAME mx1.unsigned.test." >>"$work/$zone.zone"
      echo "to-bogus 3600 IN CNAME mx1.expired.test." >>"$work/$zone.zone"
      echo "to-secure 3600 IN CNAME mx1.secure-nsec.test." >>"$work/$zone.zone" ;;
    mx-cname)
      # The MX host is a CNAME into another signed zone: the TLSA base domain is the target (RFC 7672 §2.2.3).
      sed -i "s/^@ 3600 IN MX 10 mx1\.$zone\./@ 3600 IN MX 10 mx-alias.$zone./" "$work/$zone.zone"
      echo "mx-alias 3600 IN CNAME mx1.secure-nsec.test." >>"$work/$zone.zone" ;;
    optout)
      # An unsigned delegation inside an opt-out span: it has no NSEC3 of its own (RFC 5155 §6).
      echo "deleg 3600 IN NS ns1.test." >>"$work/$zone.zone" ;;
    secure-nsec3 | secure-nsec)
      # An unsigned delegation the parent proves insecure with NSEC/NSEC3 (no DS bit).
      echo "deleg 3600 IN NS ns1.test." >>"$work/$zone.zone" ;;
  esac
  opts=${OPTS[$name]:-}
  case "$name" in
    expired) INCEPTION=20200101000000 EXPIRATION=20200201000000 sign "$zone" "$work/$zone.zone" "$out/zones/$zone.signed" ;;
    future) INCEPTION=20400101000000 EXPIRATION=20410101000000 sign "$zone" "$work/$zone.zone" "$out/zones/$zone.signed" ;;
    *) # shellcheck disable=SC2086
      sign "$zone" "$work/$zone.zone" "$out/zones/$zone.signed" $opts ;;
  esac
  signed="$out/zones/$zone.signed"
  case "$name" in
    no-dnskey) # RFC 4035 §5.2: the DNSKEY RRset (and its signatures) removed from the zone.
      grep -Pv '\tDNSKEY\t|\tRRSIG\tDNSKEY ' "$signed" >"$work/x" && mv "$work/x" "$signed" ;;
    no-rrsig) # RFC 4035 §5.3: the MX RRset loses its signature.
      grep -Pv "^$zone\.\t\d+\tIN\tRRSIG\tMX " "$signed" >"$work/x" && mv "$work/x" "$signed" ;;
    tampered) # RFC 4035 §5.3.3: the MX data changed after signing.
      sed -E "s/^($zone\.\t[0-9]+\tIN\tMX\t10 )mx1\./\1evil./" "$signed" >"$work/x" && mv "$work/x" "$signed" ;;
    wrong-signer) # RFC 4035 §5.3.1: the MX signature names the parent zone as its signer.
      sed -E "s/^($zone\.\t[0-9]+\tIN\tRRSIG\tMX (\S+ ){6})$zone\. /\1test. /" "$signed" >"$work/x" && mv "$work/x" "$signed" ;;
  esac
  # The parent's side of the cut: NS, and the DS unless the case says otherwise.
  tld_delegations+="$zone. 3600 IN NS ns1.test."$'\n'
  case "$name" in
    ds-mismatch) # RFC 4035 §5.2: the DS is of a key the zone does not publish.
      keygen "other.$zone" ECDSAP256SHA256
      tld_delegations+="$(ds "other.$zone" | sed "s/^other\.$zone\./$zone./")"$'\n' ;;
    unsupported-alg) # RFC 4035 §5.2: a DS whose algorithm (200) no validator knows ⇒ insecure.
      tld_delegations+="$(ds "$zone" | awk 'BEGIN{OFS="\t"} {$6=200; print}')"$'\n' ;;
    unsupported-digest) # RFC 4035 §5.2: a DS whose digest type (99) no validator knows ⇒ insecure.
      tld_delegations+="$(ds "$zone" | awk 'BEGIN{OFS="\t"} {$7=99; print}')"$'\n' ;;
    alg5) tld_delegations+="$(ds "$zone" -1)"$'\n' ;;   # a SHA-1 DS (digest type 1)
    alg14) tld_delegations+="$(ds "$zone" -4)"$'\n' ;;  # a SHA-384 DS (digest type 4)
    *) tld_delegations+="$(ds "$zone")"$'\n' ;;
  esac
done

# An unsigned zone, delegated without a DS (RFC 4035 §5.2: a proven insecure delegation).
child unsigned.test >"$out/zones/unsigned.test.zone"
tld_delegations+="unsigned.test. 3600 IN NS ns1.test."$'\n'

# test.: the TLD, NSEC, ECDSA P-256.
keygen test ECDSAP256SHA256
{
  cat <<EOF
\$ORIGIN test.
\$TTL 3600
@ 3600 IN SOA ns1.test. hostmaster.test. 2025010101 7200 3600 1209600 300
@ 3600 IN NS ns1.test.
ns1 3600 IN A 127.0.0.1
EOF
  printf '%s' "$tld_delegations"
} >"$work/test.zone"
sign test "$work/test.zone" "$out/zones/test.signed"

# .: the root, RSASHA256 as the real one.
keygen . RSASHA256 2048
{
  cat <<EOF
\$ORIGIN .
\$TTL 86400
. 86400 IN SOA ns1.test. hostmaster.test. 2025010101 1800 900 604800 86400
. 86400 IN NS ns1.test.
test. 86400 IN NS ns1.test.
ns1.test. 86400 IN A 127.0.0.1
EOF
  ds test
} >"$work/root.zone"
sign . "$work/root.zone" "$out/zones/root.signed"

# The trust anchor: the root KSK's DS (SHA-256) and its DNSKEY.
ds . >"$out/root-anchor.ds"
sed 's/;.*//' "$(ksk .).key" >"$out/root-anchor.key"
cp -r "$work/keys/." "$out/keys/"
cp "$work"/*.zone "$out/unsigned/"
echo "signed $(ls "$out/zones" | wc -l) zones into $out/zones; trust anchor $out/root-anchor.ds"
