#!/usr/bin/env bash
# Makes the demo's BIMI material (issue 42 item 3) into fixtures/demo-bimi/: the logo of the demo
# domain brand.example (SVG Tiny PS), a demo Mark Verifying Authority (a root and an issuing CA
# with the BIMI key usage, research/bimi.md §6), the brand's VMC (leaf + issuing CA) whose logotype
# is that logo, and a demo web authority with the certificate of the logo host bimi.brand.example
# (the demo's HTTPS host on 127.0.0.4 presents it). Twenty years, checked by
# test/service/demo-sections.test.ts. Nothing but `serve --demo` trusts either authority, and only
# for the demo's own domains. Run once; the output is committed (the keys of the authorities are not).
set -euo pipefail
out="$(cd "$(dirname "$0")/.." && pwd)/fixtures/demo-bimi"
days=7300
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

cat >logo.svg <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 100 100">
<title>Brand Example (spoof-checker demo)</title>
<rect width="100" height="100" fill="#0b5394"/>
<path d="M30 25h25c12 0 20 7 20 17 0 6-3 10-8 12 7 2 11 7 11 14 0 11-9 17-22 17H30z M44 37v13h9c5 0 8-2 8-6.5S58 37 53 37z M44 61v15h11c6 0 9-3 9-7.5S61 61 55 61z" fill="#ffffff"/>
</svg>
EOF
hash=$(openssl dgst -sha256 -hex logo.svg | awk '{print $NF}')
data=$(gzip -9n <logo.svg | base64 -w0)

cat >mva.cnf <<EOF
oid_section = new_oids
[ new_oids ]
markType = 1.3.6.1.4.1.53087.1.13
trademarkCountryOrRegionName = 1.3.6.1.4.1.53087.1.3
trademarkIdentifier = 1.3.6.1.4.1.53087.1.4
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = unused
[ root_ext ]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[ inter_ext ]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
extendedKeyUsage = 1.3.6.1.5.5.7.3.31
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always
[ leaf_ext ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = 1.3.6.1.5.5.7.3.31
subjectAltName = DNS:brand.example
authorityKeyIdentifier = keyid:always
certificatePolicies = 1.3.6.1.4.1.53087.1.1
1.3.6.1.5.5.7.1.12 = ASN1:SEQUENCE:logotype_extn
[ logotype_extn ]
subjectLogo = EXPLICIT:2C,IMPLICIT:0C,SEQUENCE:logotype_data
[ logotype_data ]
image = SEQUENCE:image_seq
[ image_seq ]
img1 = SEQUENCE:logotype_image
[ logotype_image ]
imageDetails = SEQUENCE:logotype_details
[ logotype_details ]
mediaType = IA5STRING:image/svg+xml
logotypeHash = SEQUENCE:hash_seq
logotypeURI = SEQUENCE:uri_seq
[ hash_seq ]
h1 = SEQUENCE:hash_alg_value
[ hash_alg_value ]
hashAlg = SEQUENCE:sha256_alg
hashValue = FORMAT:HEX,OCTETSTRING:$hash
[ sha256_alg ]
algorithm = OID:sha256
[ uri_seq ]
u1 = IA5STRING:data:image/svg+xml;base64,$data
EOF

# The demo Mark Verifying Authority.
openssl req -x509 "${EC[@]}" -keyout root.key -out root.pem -days "$days" -subj '/O=spoof-checker demo/CN=spoof-checker demo Mark Verifying Authority (not for real use)' -config mva.cnf -extensions root_ext 2>/dev/null
openssl req -new "${EC[@]}" -keyout inter.key -out inter.csr -subj '/O=spoof-checker demo/CN=spoof-checker demo Mark Issuing CA (not for real use)' -config mva.cnf 2>/dev/null
openssl x509 -req -in inter.csr -CA root.pem -CAkey root.key -set_serial 8192 -days "$days" -extfile mva.cnf -extensions inter_ext -out inter.pem 2>/dev/null
openssl req -new "${EC[@]}" -keyout vmc.key -out vmc.csr -subj '/C=ZZ/O=Brand Example/CN=Brand Example/markType=Registered Mark/trademarkCountryOrRegionName=ZZ/trademarkIdentifier=DEMO-1' -config mva.cnf 2>/dev/null
openssl x509 -req -in vmc.csr -CA inter.pem -CAkey inter.key -set_serial 10000 -days "$days" -extfile mva.cnf -extensions leaf_ext -out vmc.pem 2>/dev/null

# The demo web authority and the logo host's TLS certificate.
openssl req -x509 "${EC[@]}" -keyout web-ca.key -out web-ca.pem -days "$days" -subj '/CN=spoof-checker demo web authority (not for real use)' -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign' 2>/dev/null
openssl req -new "${EC[@]}" -keyout host.key -out host.csr -subj '/CN=bimi.brand.example' 2>/dev/null
printf 'subjectAltName=DNS:bimi.brand.example\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >host.ext
openssl x509 -req -in host.csr -CA web-ca.pem -CAkey web-ca.key -set_serial 4096 -days "$days" -extfile host.ext -out host.pem 2>/dev/null

cp logo.svg "$out/logo.svg"
cp root.pem "$out/mva-root.pem"
cat vmc.pem inter.pem >"$out/vmc.pem"
cp web-ca.pem "$out/web-ca.pem"
cp host.pem "$out/host.pem"
cp host.key "$out/host.key"
echo "wrote $out"
