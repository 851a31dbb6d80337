#!/usr/bin/env node
// Test-only generator of real CloudEvents dead letters for dlqx's fixtures.
//
// It builds CloudEvents with the real `cloudevents` SDK (npm, see package.json), serialises
// them with the SDK's own bindings where it has one (HTTP binary: `ce-`, Kafka binary: `ce_`,
// HTTP structured: application/cloudevents+json) and, for the AMQP binding (which the JS SDK
// does not implement), by the AMQP binding's rule (cloudevents/spec:
// cloudevents/bindings/amqp-protocol-binding.md §3.1: every attribute but datacontenttype as an
// application property prefixed `cloudEvents_` or `cloudEvents:`). It publishes them with the
// real `amqplib` client to a private broker (scripts/broker start) into queues whose
// dead-letter exchange routes to a DLQ, rejects them (requeue=false) so that RabbitMQ
// dead-letters them (x-death), and leaves them in the DLQs for `dlqx peek` to snapshot.
//
// Usage (see README.md beside this file):
//   dir=$(scripts/broker start | tail -1); . "$dir/env"
//   node tests/frameworks/node/cloudevents-gen.js        # prints the DLQ names, one a line
//   for q in $(...); do build/dlqx peek "$q" -o fixtures/cloudevents/CASE.jsonl; done
//
// Everything is deterministic except what the broker stamps (x-death times) and the read time.
'use strict';

const fs = require('fs');
const amqp = require('amqplib');
const { CloudEvent, HTTP, Kafka } = require('cloudevents');

const env = process.env;
if (!env.DLQX_AMQP_PORT || !env.DLQX_PASSWORD_FILE) {
  console.error('cloudevents-gen: source the broker env first (scripts/broker start)');
  process.exit(2);
}
const password = fs.readFileSync(env.DLQX_PASSWORD_FILE, 'utf8').trim();
const url = `amqp://${encodeURIComponent(env.DLQX_BROKER_USER || 'dlqx')}:${encodeURIComponent(password)}` +
  `@127.0.0.1:${env.DLQX_AMQP_PORT}/%2F`;

const DLX = 'fixtures.dlx';
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

// One event with every kind of attribute: required, optional and extensions.
function orderEvent(id, extra) {
  return new CloudEvent({
    specversion: '1.0',
    id,
    source: 'https://shop.example.com/orders',
    type: 'com.example.order.placed.v1',
    subject: 'orders/A-1001',
    time: '2026-12-05T07:30:00.123Z',
    datacontenttype: 'application/json',
    dataschema: 'https://schemas.example.com/order-placed-v1.json',
    traceparent: `00-${TRACE}-00f067aa0ba902b7-01`,
    tenant: 'acme',
    data: { orderId: 'A-1001', total: 42.5 },
    ...extra,
  });
}

// The AMQP binding's binary mode: datacontenttype -> content-type, every other attribute a
// prefixed application property (here: a 0-9-1 header). `time` as a string or, as the
// binding allows, as the AMQP timestamp type.
function amqpBinary(event, prefix, timeAsTimestamp) {
  const headers = {};
  const attrs = event.toJSON();
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'data' || k === 'data_base64' || k === 'datacontenttype') continue;
    if (k === 'time' && timeAsTimestamp) {
      headers[prefix + k] = { '!': 'timestamp', value: Math.floor(Date.parse(v) / 1000) };
    } else {
      headers[prefix + k] = v;
    }
  }
  return {
    headers,
    contentType: event.datacontenttype,
    body: Buffer.from(JSON.stringify(event.data)),
  };
}

// The SDK's HTTP and Kafka binary serialisers: their headers copied onto AMQP headers (as a
// bridge does), the content-type header onto the AMQP content_type property.
function fromSdkBinary(msg) {
  const headers = {};
  let contentType;
  for (const [k, v] of Object.entries(msg.headers)) {
    if (k.toLowerCase() === 'content-type') contentType = v;
    else if (v !== undefined) headers[k] = v;
  }
  const data = msg.body;
  const body = Buffer.isBuffer(data) ? data : Buffer.from(typeof data === 'string' ? data : JSON.stringify(data));
  return { headers, contentType, body };
}

function fromSdkStructured(msg) {
  return {
    headers: {},
    contentType: msg.headers['content-type'],
    body: Buffer.from(msg.body),
  };
}

const cases = [];
function add(name, msgs) { cases.push({ name, msgs }); }

// Binary mode, AMQP binding, `cloudEvents_` (the binding's preferred, JMS-safe separator).
add('binary-amqp-underscore', [
  amqpBinary(orderEvent('evt-0001'), 'cloudEvents_', false),
  amqpBinary(orderEvent('evt-0002', { sequence: 7 }), 'cloudEvents_', true),
]);
// Binary mode, AMQP binding, `cloudEvents:` (what NServiceBus.Envelope.CloudEvents reads).
add('binary-amqp-colon', [amqpBinary(orderEvent('evt-0003'), 'cloudEvents:', false)]);
// Binary mode through the SDK's HTTP binding (`ce-`) and Kafka binding (`ce_`).
add('binary-http', [fromSdkBinary(HTTP.binary(orderEvent('evt-0004')))]);
add('binary-kafka', [fromSdkBinary(Kafka.binary(orderEvent('evt-0005')))]);
// Structured mode: the whole event in the body, application/cloudevents+json.
add('structured', [
  fromSdkStructured(HTTP.structured(orderEvent('evt-0006'))),
  fromSdkStructured(HTTP.structured(new CloudEvent({
    specversion: '1.0', id: 'evt-0007', source: '/sensors/tn-1234567',
    type: 'com.example.sensor.reading', time: '2026-12-05T07:31:00Z',
    datacontenttype: 'application/octet-stream',
    data: Buffer.from([0, 1, 2, 0xfe, 0xff]),
  }))),
]);
// Invalid events, made with the SDK in non-strict mode (it would refuse them otherwise).
const noSource = new CloudEvent({ specversion: '1.0', id: 'evt-0008', type: 'com.example.order.placed.v1',
  time: '2026-12-05T07:32:00Z', datacontenttype: 'application/json', data: { orderId: 'A-1002' } }, false);
add('invalid-missing-source', [
  amqpBinary(noSource, 'cloudEvents_', false),
  // Structured without `type` (built from the SDK's own JSON of a valid event, `type` removed).
  (() => {
    const j = orderEvent('evt-0009').toJSON();
    delete j.type;
    return { headers: {}, contentType: 'application/cloudevents+json; charset=utf-8', body: Buffer.from(JSON.stringify(j)) };
  })(),
  // Structured whose body is not JSON at all.
  { headers: {}, contentType: 'application/cloudevents+json', body: Buffer.from('{"specversion":"1.0","id":"evt-0010",') },
]);
// Hostile: wrong kinds where strings are expected, binary bytes, terminal escapes.
add('hostile', [
  {
    headers: {
      'cloudEvents_specversion': '1.0',
      'cloudEvents_id': { nested: 'x' },
      'cloudEvents_source': 12345,
      'cloudEvents_type': 'com.example.\u001b]52;c;ZWNobyBwd25lZA==\u0007evil\u001b[2J',
      'cloudEvents_subject': Buffer.from([0xff, 0xfe, 0x00, 0x41]),
      'cloudEvents_time': 'not a time',
      'ce-id': 'mixed-prefix',
    },
    contentType: 'application/json',
    body: Buffer.from('{"x":1}'),
  },
]);
// Near-misses that must not be read as CloudEvents.
add('nearmiss-json-id-type', [
  { headers: {}, contentType: 'application/json',
    body: Buffer.from(JSON.stringify({ id: 'n-1', type: 'order', source: 'x' })) },
  { headers: { 'ce-count': 3, 'cessna': 'plane' }, contentType: 'text/plain', body: Buffer.from('hello') },
]);

// W3C traceparent on plain AMQP messages (no framework): three dead letters of one trace,
// one whose correlation_id is set (the rule must not override it), one invalid traceparent.
const tp = (span) => `00-${TRACE}-${span}-01`;
add('traceparent-plain', [
  { headers: { traceparent: tp('a1b2c3d4e5f60718') }, contentType: 'application/json',
    messageId: 'tp-1', body: Buffer.from('{"step":1}') },
  { headers: { traceparent: tp('b1b2c3d4e5f60718'), tracestate: 'vendor=opaque' }, contentType: 'application/json',
    messageId: 'tp-2', body: Buffer.from('{"step":2}') },
  { headers: { traceparent: tp('c1b2c3d4e5f60718') }, contentType: 'application/json',
    messageId: 'tp-3', correlationId: 'order-A-1001', body: Buffer.from('{"step":3}') },
  { headers: { traceparent: '00-00000000000000000000000000000000-c1b2c3d4e5f60718-01' }, contentType: 'application/json',
    messageId: 'tp-4', body: Buffer.from('{"step":4}') },
  { headers: { traceparent: 'ff-4bf92f3577b34da6a3ce929d0e0e4736-c1b2c3d4e5f60718-01' }, contentType: 'application/json',
    messageId: 'tp-5', body: Buffer.from('{"step":5}') },
]);

async function main() {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  await ch.assertExchange(DLX, 'direct', { durable: false, autoDelete: false });
  for (const c of cases) {
    const q = `ce.${c.name}`;
    const dlq = `${q}.dlq`;
    await ch.deleteQueue(q);
    await ch.deleteQueue(dlq);
    await ch.assertQueue(dlq, { durable: true });
    await ch.bindQueue(dlq, DLX, q);
    await ch.assertQueue(q, { durable: true, arguments: { 'x-dead-letter-exchange': DLX } });
    for (const m of c.msgs) {
      const props = { headers: m.headers, persistent: true };
      if (m.contentType) props.contentType = m.contentType;
      if (m.messageId) props.messageId = m.messageId;
      if (m.correlationId) props.correlationId = m.correlationId;
      ch.sendToQueue(q, m.body, props);
    }
    await ch.waitForConfirms();
    // Consume and reject each one: the broker dead-letters it to DLX -> the DLQ.
    for (let i = 0; i < c.msgs.length; i++) {
      let got = false;
      for (let t = 0; t < 50 && !got; t++) {
        const d = await ch.get(q, { noAck: false });
        if (d) { ch.reject(d, false); got = true; } else await new Promise((r) => setTimeout(r, 50));
      }
      if (!got) throw new Error(`no message to reject in ${q}`);
    }
    // Wait until the DLQ holds them all.
    for (let t = 0; t < 100; t++) {
      const st = await ch.checkQueue(dlq);
      if (st.messageCount >= c.msgs.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    console.log(`${c.name} ${dlq}`);
  }
  await ch.close();
  await conn.close();
}

main().catch((e) => { console.error('cloudevents-gen:', e.message); process.exit(1); });
