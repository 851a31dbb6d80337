"""Derives the reconstructed fixtures and the expectations of fixtures/celery/ (test-only).

usage: derive.py FIXTURE_DIR
1. The reconstructed cases, built from the captured reject.jsonl (SOURCES.md says which):
   hostile kinds and escapes, malformed bodies, near-misses, and a Celery 5.5 message
   dead-lettered by RabbitMQ 3.13 (headers of as_task_v2 at celery 5dc781f0bd).
2. <case>.reissue.jsonl: the re-issue rule applied to a captured dead letter.
3. <case>.expect.json: what `dlqx decode` must say of each record (a deep subset).
The expectations follow the rules of docs/dialects.md (celery section); they are written
once by this script and then reviewed and committed, not recomputed by the tests.
"""
import copy
import datetime
import json
import os
import sys

D = sys.argv[1]
UUID = '<uuid>'


def read(name):
    with open(os.path.join(D, name), encoding='utf-8') as f:
        return [json.loads(line) for line in f if line.strip()]


def write_jsonl(name, recs):
    with open(os.path.join(D, name), 'w', encoding='utf-8') as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(',', ':')) + '\n')


def write_json(name, obj):
    with open(os.path.join(D, name), 'w', encoding='utf-8') as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write('\n')


def ival(v):
    """An integer header value in either snapshot form, else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, dict) and v.get('type') in ('int8', 'int16', 'int32', 'int64', 'uint8',
                                                 'uint16', 'uint32', 'uint64'):
        return int(v['value'])
    return None


def sval(v):
    return v if isinstance(v, str) else None


def iso_ms(s):
    if not isinstance(s, str):
        return None
    try:
        dt = datetime.datetime.fromisoformat(s)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=datetime.timezone.utc)
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    d = dt - epoch
    return (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000


def deaths(h):
    xd = h.get('x-death')
    return [e for e in xd if isinstance(e, dict)] if isinstance(xd, list) else []


def death_time_ms(e):
    t = e.get('time')
    if isinstance(t, dict) and t.get('type') == 'timestamp':
        return int(t['value']) * 1000
    return None


def expect_celery(rec):
    """The expectation of one celery record, by the dialect's rules."""
    h = rec.get('headers') or {}
    body = None
    try:
        body = json.loads(rec.get('body', ''))
    except ValueError:
        pass
    proto1 = 'task' not in h
    src = body if proto1 else h
    tid, task = sval(src.get('id')), sval(src.get('task'))
    root, parent = sval(src.get('root_id')), sval(src.get('parent_id'))
    retries = ival(src.get('retries'))
    xd = deaths(h)
    count = sum(ival(e.get('count')) or 0 for e in xd) if xd else None
    times = [t for t in (death_time_ms(e) for e in xd) if t is not None]
    first = xd[-1] if xd else {}
    rks = first.get('routing-keys') or [None]
    tl = src.get('timelimit')
    tl = tl if isinstance(tl, list) and len(tl) == 2 else [None, None]
    num = lambda v: v if isinstance(v, float) else ival(v)
    eta, expires = sval(src.get('eta')), sval(src.get('expires'))
    out = {
        'dialect': 'celery',
        'id': tid,
        'type': task,
        'correlation_id': root or tid,
        'causation_id': parent if parent != tid else None,
        'attempt': retries if retries is not None else (count or 1),
        'error_type': None,
        'error_message': None,
        'stack_trace': None,
        'failed_at_ms': max(times) if times else None,
        'origin': sval(src.get('origin')),
        'celery': {
            'protocol': 1 if proto1 else 2,
            'task': task,
            'root_id': root,
            'parent_id': parent,
            'group': sval(src.get('group')),
            'group_index': ival(src.get('group_index')),
            'retries': retries,
            'death_count': count,
            'eta': eta,
            'eta_ms': iso_ms(eta),
            'expires': expires,
            'expires_ms': iso_ms(expires),
            'time_limit': num(tl[0]),
            'soft_time_limit': num(tl[1]),
            'argsrepr': sval(src.get('argsrepr')),
            'kwargsrepr': sval(src.get('kwargsrepr')),
        },
    }
    c = out['celery']
    args = kwargs = embed = None
    if not proto1 and isinstance(body, list):
        args, kwargs, embed = (body + [None, None, None])[:3]
    elif isinstance(body, dict):
        args, kwargs, embed = body.get('args'), body.get('kwargs'), body
    if body is not None:
        c['args'], c['kwargs'] = args, kwargs
    embed = embed if isinstance(embed, dict) else {}

    def names(v, rev=False):
        if isinstance(v, dict):
            return [v.get('task')]
        if not isinstance(v, list):
            return None
        return [x.get('task') if isinstance(x, dict) else None for x in (v[::-1] if rev else v)]
    c['callbacks'] = names(embed.get('callbacks'))
    c['errbacks'] = names(embed.get('errbacks'))
    c['chain'] = names(embed.get('chain'), True)
    ch = embed.get('chord')
    c['chord'] = ch.get('task') if isinstance(ch, dict) else None
    if xd:
        last = xd[0]  # the newest death (x-last-death-* when RabbitMQ 3.13+ writes them)
        reason = h.get('x-last-death-reason', last.get('reason'))
        queue = h.get('x-last-death-queue', last.get('queue'))
        out['error'] = f"dead-lettered by the broker: {reason} from {queue}"
        out['error_from_broker'] = True
        out['source'] = {'queue': h.get('x-first-death-queue', first.get('queue')),
                         'exchange': first.get('exchange'), 'routing_key': rks[0],
                         'how': 'x-first-death-queue'}
    if proto1:
        out['recognised'] = {'by': ['body.task', 'body.id']}
    else:
        out['recognised'] = {'by': ['task', 'id'] + (['lang'] if h.get('lang') == 'py' else [])}
    return out


def expect_amqp(rec):
    return {'dialect': 'amqp'}


# --- 1. reconstructed cases ------------------------------------------------------------
base = read('reject.jsonl')[0]


def variant(**headers):
    r = copy.deepcopy(base)
    for k, v in headers.items():
        if v is KeyError:
            r['headers'].pop(k, None)
        else:
            r['headers'][k] = v
    return r


ESC = '\u001b'
hostile_kinds = [variant(root_id={'type': 'int32', 'value': 5}, parent_id={'n': 1},
                         retries='3', origin=None, eta={'type': 'int64', 'value': 7},
                         expires={'type': 'bytes', 'base64': '/wA='},
                         group=['g', 1], group_index='0', argsrepr=None,
                         timelimit='300', lang={'type': 'int8', 'value': 1},
                         kwargsrepr={'type': 'table', 'value': [{'key': 'type', 'value': 'x'}]})]
hostile_escapes = [variant(task=f'shop.tasks.{ESC}[31mred{ESC}]52;c;ZXZpbA=={ESC}\\',
                           argsrepr=f"('{ESC}]52;c;cm0gLXJmIH4=\u0007', '\u202eevil')",
                           origin=f'gen1@{ESC}[2Jhost')]
hostile_escapes[0]['body_base64'] = 'W1tdLCB7fSwgeyJhIjogIv/+AAEbWzMxbSJ9XQ=='  # not UTF-8
del hostile_escapes[0]['body']
malformed = []
for b in ('[["A-1"], {}]', '[1, 2, 3]', '[["A-1"], ["not", "a", "dict"], {}]',
          '[["A-1"], {}, "embed"]', '{"args": ["A-1"], "kwargs": {}}', '', 'not json'):
    r = copy.deepcopy(base)
    r['body'] = b
    malformed.append(r)
nearmiss_task_int = [variant(task={'type': 'int32', 'value': 7})]
nearmiss_task_no_id = [variant(id=KeyError)]
nearmiss_body_task = [{'v': 1, 'queue': 'orders.dlq', 'properties': {
    'content_type': 'application/json', 'delivery_mode': 2},
    'body': '{"task": "send-invoice", "args": [1]}'}]

# Celery 5.5/5.6 (as_task_v2 at 5dc781f0bd: stamped_headers, stamps, replaced_task_nesting)
# dead-lettered by RabbitMQ 3.13+ (x-last-death-*; x-death keys as 3.13 writes them).
tid, rid, pid = ('8a7b3c1e-9d2f-4e6a-b5c4-3d2e1f0a9b8c', '1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9',
                 '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d')
celery55 = [{
    'v': 1, 'queue': 'celery.dlq', 'exchange': 'celery.dlx', 'routing_key': 'celery',
    'properties': {'content_type': 'application/json', 'content_encoding': 'utf-8',
                   'correlation_id': tid, 'reply_to': '', 'delivery_mode': 2, 'priority': 0},
    'headers': {
        'lang': 'py', 'task': 'proj.tasks.charge', 'id': tid, 'shadow': None, 'eta': None,
        'expires': None, 'group': None, 'group_index': None,
        'retries': {'type': 'int32', 'value': 3}, 'timelimit': [None, None],
        'root_id': rid, 'parent_id': pid, 'argsrepr': '(42,)', 'kwargsrepr': '{}',
        'origin': 'gen7@worker-2', 'ignore_result': False,
        'replaced_task_nesting': {'type': 'int32', 'value': 0}, 'stamped_headers': None,
        'stamps': {},
        'x-death': [{'count': 2, 'reason': 'rejected', 'queue': 'celery',
                     'time': {'type': 'timestamp', 'value': 1767329900},
                     'exchange': '', 'routing-keys': ['celery']},
                    {'count': 1, 'reason': 'expired', 'queue': 'celery.wait',
                     'time': {'type': 'timestamp', 'value': 1767329000},
                     'exchange': 'celery.delay', 'routing-keys': ['celery']}],
        'x-first-death-exchange': 'celery.delay', 'x-first-death-queue': 'celery.wait',
        'x-first-death-reason': 'expired', 'x-last-death-exchange': '',
        'x-last-death-queue': 'celery', 'x-last-death-reason': 'rejected'},
    'body': '[[42], {}, {"callbacks": null, "errbacks": [{"task": "proj.tasks.alert", '
            '"args": [], "kwargs": {}, "options": {}, "subtask_type": null, '
            '"immutable": false}], "chain": null, "chord": null}]'}]

write_jsonl('hostile-kinds.jsonl', hostile_kinds)
write_jsonl('hostile-escapes.jsonl', hostile_escapes)
write_jsonl('malformed-bodies.jsonl', malformed)
write_jsonl('nearmiss-task-int.jsonl', nearmiss_task_int)
write_jsonl('nearmiss-task-no-id.jsonl', nearmiss_task_no_id)
write_jsonl('nearmiss-body-task.jsonl', nearmiss_body_task)
write_jsonl('celery55-rabbitmq313.jsonl', celery55)

# --- 2. re-issue expectations ------------------------------------------------------------
X_DEATH = ('x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason',
           'x-last-death-exchange', 'x-last-death-queue', 'x-last-death-reason')
for case in ('exception', 'default-exchange'):
    out = []
    for rec in read(f'{case}.jsonl'):
        h = rec['headers']
        first = deaths(h)[-1]
        old = h['id']
        c = {'v': 1, 'queue': first['queue'], 'exchange': first['exchange'],
             'routing_key': first['routing-keys'][0],
             # kombu's publish sends priority 0 when none is given (as the captured move did)
             'properties': dict(rec['properties'], correlation_id=UUID),
             'headers': {}, 'body': rec['body']}
        c['properties'].setdefault('priority', 0)
        for k, v in h.items():
            if k in X_DEATH:
                continue
            if k == 'id':
                v = UUID
            elif k == 'parent_id':
                v = old
            elif k == 'retries':
                v = {'type': 'int32', 'value': 0}
            c['headers'][k] = v
        out.append(c)
    write_jsonl(f'{case}.reissue.jsonl', out)

# --- 3. expectations ---------------------------------------------------------------------
special = {
    'nearmiss-id-no-task.jsonl': expect_amqp,
    'nearmiss-task-int.jsonl': expect_amqp,
    'nearmiss-task-no-id.jsonl': expect_amqp,
    'nearmiss-body-task.jsonl': expect_amqp,
}
accept = {  # per case: the consumer's acceptance (default: accepted)
    'undecodable-pickle.jsonl': [False],
    'hostile-escapes.jsonl': [False],
    'malformed-bodies.jsonl': [False, False, False, False, True, False, False],
}
for name in sorted(os.listdir(D)):
    if not name.endswith('.jsonl') or name.endswith(('.replay.jsonl', '.reissue.jsonl')):
        continue
    recs = read(name)
    exp = [special.get(name, expect_celery)(r) for r in recs]
    for i, e in enumerate(exp):
        if e['dialect'] == 'celery':
            e['accepted'] = accept.get(name, [True] * len(recs))[i]
    write_json(name[:-len('.jsonl')] + '.expect.json', exp)
    print(name, len(exp))
