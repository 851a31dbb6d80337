#!/bin/sh
# amqps:// against the test node's real TLS listeners (scripts/broker start --tls): the CA,
# peer and host-name verification on by default, --tls-no-verify, a client certificate where
# the broker requires one; every failure one clear sentence, exit 13, never a password.
# Needs the test broker's environment (run.sh) with DLQX_AMQPS_URL, DLQX_AMQPS_MTLS_URL,
# DLQX_TLS_CA, DLQX_TLS_CERT and DLQX_TLS_KEY.
set -u
dlqx=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
password=$(cat "$DLQX_PASSWORD_FILE")
if [ -z "${DLQX_AMQPS_URL:-}" ] || [ -z "${DLQX_AMQPS_MTLS_URL:-}" ] || [ ! -s "${DLQX_TLS_CA:-}" ]; then
  echo "FAIL tls_live: the test node has no TLS listener (start it with scripts/broker start --tls)"
  exit 1
fi
ca=$DLQX_TLS_CA cert=$DLQX_TLS_CERT key=$DLQX_TLS_KEY
url=$DLQX_AMQPS_URL mtls=$DLQX_AMQPS_MTLS_URL
# The same listeners under the name the certificate does not list (it names localhost only).
url_ip=$(printf '%s' "$url" | sed 's/@localhost:/@127.0.0.1:/')
plain_as_tls="amqps://dlqx@localhost:$DLQX_AMQP_PORT/%2F"
tls_as_plain="amqp://dlqx@127.0.0.1:$DLQX_AMQPS_PORT/%2F"

. "$(dirname "$0")/check.sh"

# A queue with three messages, made over the management API (mgmt, check.sh).
q=tls.orders.dlq
mgmt DELETE "queues/%2F/$q" >/dev/null
code=$(mgmt PUT "queues/%2F/$q" '{"durable":true}')
for i in 1 2 3; do
  mgmt POST "exchanges/%2F/amq.default/publish" \
    "{\"routing_key\":\"$q\",\"payload\":\"{\\\"order\\\":$i}\",\"payload_encoding\":\"string\",\"properties\":{\"message_id\":\"m$i\",\"delivery_mode\":2}}" >/dev/null
done
depth() { "$dlqx" queues --no-mgmt --json "$q" 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/'; }
if [ "$code" = 201 ] && [ "$(depth)" = 3 ]; then pass=$((pass + 1)); else
  echo "FAIL setup: queue $q (HTTP $code, depth $(depth))"; fail=$((fail + 1)); fi

# Works: the CA given; the listing (passive declares over amqps), with and without the API.
check queues-amqps 0 "no management API: the queues named, with their depth from a passive declare on amqps://dlqx@localhost:" \
  "$dlqx" queues --no-mgmt "$q" --url "$url" --cacert "$ca"
grep -q "^$q  *3 " "$tmp/out" || { echo "FAIL queues-amqps: no depth 3 for $q:"; cat "$tmp/out"; fail=$((fail + 1)); }
check queues-amqps-mgmt 0 'counts exact (passive declare)' "$dlqx" queues --all --url "$url" --cacert "$ca"
# The listing still comes from the API when AMQP over TLS fails, and says that it failed.
check queues-mgmt-amqps-fails 0 'the AMQP connection failed (above), so peek and replay would too' \
  "$dlqx" queues --all --url "$url"
grep -q "failed verification" "$tmp/err" || { echo "FAIL queues-mgmt-amqps-fails: no TLS error:"; cat "$tmp/err"; fail=$((fail + 1)); }
check peek-amqps 0 "$q: complete" "$dlqx" peek "$q" --url "$url" --cacert "$ca" -o "$tmp/peek.jsonl"
n=$(wc -l <"$tmp/peek.jsonl" 2>/dev/null || echo 0)
if [ "$n" -eq 3 ] && [ "$(depth)" = 3 ] && [ "$("$dlqx" decode "$tmp/peek.jsonl" | wc -l)" -eq 3 ]; then
  pass=$((pass + 1))
else
  echo "FAIL peek-amqps: $n records, depth after $(depth)"; fail=$((fail + 1))
fi
# A client certificate sent where it is optional: verified, and accepted.
check cert-optional-given 0 "$q: complete" \
  "$dlqx" peek "$q" --url "$url" --cacert "$ca" --cert "$cert" --key "$key" -o "$tmp/p2.jsonl"

# Verification on by default: the system's CAs do not know the throw-away CA.
check no-cacert 13 "the broker's TLS certificate failed verification: it is not signed by a CA the system trusts" \
  "$dlqx" peek "$q" --url "$url"
check wrong-cacert 13 "certificate failed verification: it is not signed by the CA in $cert" \
  "$dlqx" peek "$q" --url "$url" --cacert "$cert"
check hostname-mismatch 13 'host-name verification failed: the broker.s TLS certificate is not for the host name "127.0.0.1"' \
  "$dlqx" peek "$q" --url "$url_ip" --cacert "$ca"
check no-verify 0 "$q: complete" "$dlqx" peek "$q" --url "$url_ip" --tls-no-verify -o "$tmp/p3.jsonl"
check missing-cacert-file 13 "cannot use the CA file $tmp/nope.pem" \
  "$dlqx" peek "$q" --url "$url" --cacert "$tmp/nope.pem"
check cert-without-key 13 'give both --cert and --key' \
  "$dlqx" peek "$q" --url "$mtls" --cacert "$ca" --cert "$cert"

# The listener that requires a client certificate.
check mtls-cert-given 0 "$q: complete" \
  "$dlqx" peek "$q" --url "$mtls" --cacert "$ca" --cert "$cert" --key "$key" -o "$tmp/p4.jsonl"
check mtls-no-cert 13 'requires a client certificate (give --cert FILE and --key FILE)' \
  "$dlqx" peek "$q" --url "$mtls" --cacert "$ca"
check mtls-queues-no-cert 13 'requires a client certificate' \
  "$dlqx" queues --no-mgmt "$q" --url "$mtls" --cacert "$ca"
# A client certificate from a CA the broker does not know: refused, on either listener.
if openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$tmp/rogue.key" -out "$tmp/rogue.pem" -days 2 -subj /CN=dlqx \
  -addext extendedKeyUsage=clientAuth >/dev/null 2>&1; then
  check mtls-untrusted-cert 13 "does not accept the client certificate $tmp/rogue.pem" \
    "$dlqx" peek "$q" --url "$mtls" --cacert "$ca" --cert "$tmp/rogue.pem" --key "$tmp/rogue.key"
  check optional-untrusted-cert 13 "accept the client certificate $tmp/rogue.pem" \
    "$dlqx" peek "$q" --url "$url" --cacert "$ca" --cert "$tmp/rogue.pem" --key "$tmp/rogue.key"
else
  echo "FAIL openssl: cannot make a rogue client certificate"; fail=$((fail + 1))
fi

# The wrong scheme for the port, both ways.
check amqps-to-plain-port 13 'the TLS handshake failed: the port may not speak TLS' \
  "$dlqx" peek "$q" --url "$plain_as_tls" --cacert "$ca"
check amqp-to-tls-port 10 'the connection ended before the AMQP handshake: the port does not seem to speak plain AMQP (if it is a TLS port, use amqps://)' \
  "$dlqx" peek "$q" --url "$tls_as_plain"

# The management API's basic auth over plain http while AMQP is amqps: said (it still works);
# TLS options where nothing is TLS: said, not silently ignored.
check mgmt-plain-http-amqps 0 "the management API $DLQX_MGMT_URL is plain http: the password goes over the network unencrypted although the broker is amqps://" \
  "$dlqx" queues --all --url "$url" --cacert "$ca"
check cacert-plain-amqp 0 "warning: --cacert ignored: no URL here is amqps:// or https://" \
  "$dlqx" peek "$q" --url "$DLQX_URL" --cacert "$ca" --no-mgmt -o "$tmp/p5.jsonl"
check plain-amqp-loopback-mgmt 0 "" "$dlqx" queues --all
grep -q 'plain http' "$tmp/err" && { echo "FAIL plain-amqp-loopback-mgmt: warned for loopback:"; cat "$tmp/err"; fail=$((fail + 1)); }

# Nothing was taken: the queue still holds its three messages.
if [ "$(depth)" = 3 ]; then pass=$((pass + 1)); else
  echo "FAIL depth: $q holds $(depth) messages after the TLS peeks, not 3"; fail=$((fail + 1)); fi

# Moved over amqps and back: a TLS connection's publishes go out through rabbitmq-c's TLS layer
# (the plain connection's batched send(2) would write past it), each confirmed before its ack.
export DLQX_JOURNAL="$tmp/journal.jsonl"
parked=tls.orders.parked # the DLQ's name without .dlq, and .parked
mgmt DELETE "queues/%2F/$parked" >/dev/null # left by an earlier run
parked_depth() { "$dlqx" queues --no-mgmt --json "$parked" 2>/dev/null | sed 's/.*"ready":\([0-9]*\).*/\1/'; }
check move-amqps 0 "" "$dlqx" move "$q" --all --yes --create-queue --url "$url" --cacert "$ca"
done_n=$(grep -c '"kind":"outcome".*"result":"done"' "$DLQX_JOURNAL")
if [ "$(depth)" = 0 ] && [ "$(parked_depth)" = 3 ] && [ "$done_n" = 3 ]; then
  pass=$((pass + 1))
else
  echo "FAIL move-amqps: $q holds $(depth), $parked $(parked_depth), $done_n done in the journal"
  cat "$tmp/out" "$tmp/err"; fail=$((fail + 1))
fi
check move-back-amqps 0 "" "$dlqx" move "$parked" --all --yes --to-queue "$q" --url "$url" --cacert "$ca"
check peek-after-move-amqps 0 "$q: complete" "$dlqx" peek "$q" --url "$url" --cacert "$ca" -o "$tmp/p6.jsonl"
if [ "$(depth)" = 3 ] && [ "$(parked_depth)" = 0 ] &&
   [ "$("$dlqx" decode "$tmp/p6.jsonl" | grep -c '"json":{"order":[123]}')" = 3 ]; then
  pass=$((pass + 1))
else
  echo "FAIL move-back-amqps: $q holds $(depth), $parked $(parked_depth):"
  "$dlqx" decode "$tmp/p6.jsonl"; fail=$((fail + 1))
fi
mgmt DELETE "queues/%2F/$parked" >/dev/null
mgmt DELETE "queues/%2F/$q" >/dev/null
echo "tls_live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
