#!/usr/bin/env node
// Test-only: publishes the records of dlqx snapshot files (docs/snapshot-format.md) to their
// `queue` through the default exchange, with every header in its snapshot kind, declaring
// each queue (durable) first; for trying the fixtures' replay expectations on a private
// broker by hand (the suite's own runner is tests/broker/dialects_live.sh).
//   node publish-snapshot.js FILE.jsonl...        (after sourcing the broker's env)
'use strict';
const fs = require('fs');
const amqp = require('amqplib');

const env = process.env;
const password = fs.readFileSync(env.DLQX_PASSWORD_FILE, 'utf8').trim();
const url = `amqp://${encodeURIComponent(env.DLQX_BROKER_USER || 'dlqx')}:${encodeURIComponent(password)}` +
  `@127.0.0.1:${env.DLQX_AMQP_PORT}/%2F`;

const KINDS = { int8: 'byte', int16: 'short', int32: 'int', int64: 'long', uint8: 'unsignedbyte',
  uint16: 'unsignedshort', uint32: 'unsignedint', timestamp: 'timestamp', float: 'float',
  double: 'double', bool: 'boolean' };

function value(v) {
  if (v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? { '!': 'long', value: v } : { '!': 'double', value: v };
  if (Array.isArray(v)) return v.map(value);
  if (typeof v === 'object' && typeof v.type === 'string') {
    if (v.type === 'string') return v.base64 !== undefined ? { '!': 'string', value: Buffer.from(v.base64, 'base64').toString('latin1') } : v.value;
    if (v.type === 'bytes') return v.base64 !== undefined ? Buffer.from(v.base64, 'base64') : Buffer.from(v.value, 'utf8');
    if (v.type === 'table') return table(v.value);
    if (v.type === 'array') return v.value.map(value);
    if (v.type === 'void') return null;
    if (KINDS[v.type]) return { '!': KINDS[v.type], value: v.value };
    throw new Error(`kind ${v.type} not supported here`);
  }
  return table(v);
}

function table(o) {
  const t = {};
  for (const [k, v] of Object.entries(o)) t[k] = value(v);
  return t;
}

const PROPS = { content_type: 'contentType', content_encoding: 'contentEncoding', correlation_id: 'correlationId',
  reply_to: 'replyTo', expiration: 'expiration', message_id: 'messageId', type: 'type', user_id: 'userId',
  app_id: 'appId', cluster_id: 'clusterId', delivery_mode: 'deliveryMode', priority: 'priority', timestamp: 'timestamp' };

async function main() {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  let n = 0;
  for (const file of process.argv.slice(2)) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const r = JSON.parse(line);
      await ch.assertQueue(r.queue, { durable: true });
      const props = {};
      for (const [k, v] of Object.entries(r.properties || {})) props[PROPS[k]] = v;
      if (r.headers) props.headers = table(r.headers);
      const body = r.body_base64 !== undefined ? Buffer.from(r.body_base64, 'base64') : Buffer.from(r.body || '', 'utf8');
      ch.sendToQueue(r.queue, body, props);
      n++;
    }
  }
  await ch.waitForConfirms();
  await ch.close();
  await conn.close();
  console.error(`published ${n}`);
}
main().catch((e) => { console.error('publish-snapshot:', e.message); process.exit(1); });
