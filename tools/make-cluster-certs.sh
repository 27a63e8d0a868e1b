#!/bin/sh
# Makes a private cluster CA and one certificate per node, signed by it, for
# aisched's cluster TLS (--tls-cert / --tls-key / --tls-ca; README "Cluster
# security"). The CA is the cluster secret: any process holding a certificate
# it signed (and that certificate's key) is accepted as a member or worker node.
#
#   tools/make-cluster-certs.sh DIR NODE [NODE...]
#
# writes DIR/ca.pem (give it to every node), DIR/ca.key (keep it offline: it
# mints members), and DIR/NODE.pem + DIR/NODE.key per node. An existing
# DIR/ca.pem + DIR/ca.key is reused, so running it again adds nodes to the same
# cluster. Keys are EC P-256, unencrypted (protect them with file permissions,
# or encrypt one with `openssl pkey -in N.key -aes256 -out N.enc.key` and pass
# --tls-key-password). Only the CA chain is checked, not host names.
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NODE [NODE...]" >&2
  exit 2
fi
dir=$1
shift
days=${AISCHED_CERT_DAYS:-825}
umask 077
mkdir -p "$dir"

if [ ! -f "$dir/ca.key" ] || [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/ca.key" -out "$dir/ca.pem" -days 3650 -subj "/CN=aisched cluster CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
fi

# Every node is TLS server (its cluster port) and client (its connections).
ext="$dir/node.ext"
printf '%s\n' "basicConstraints=critical,CA:FALSE" \
  "keyUsage=critical,digitalSignature,keyAgreement" \
  "extendedKeyUsage=serverAuth,clientAuth" >"$ext"
for node in "$@"; do
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/$node.key" -out "$dir/$node.csr" -subj "/CN=$node"
  openssl x509 -req -in "$dir/$node.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
    -days "$days" -extfile "$ext" -out "$dir/$node.pem"
  rm -f "$dir/$node.csr"
  echo "$dir/$node.pem $dir/$node.key"
done
rm -f "$ext"
