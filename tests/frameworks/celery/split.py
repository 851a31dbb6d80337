"""Splits a peeked DLQ snapshot into fixtures/celery/<case>.jsonl (test-only; capture.sh).

usage: split.py IDS SNAPSHOT OUTDIR [SUFFIX]
IDS: lines "CASE TASK_ID" as publish.py printed them. A record belongs to the case whose id
is its `id` header (or its body's `id`, protocol 1), or its `group` header (a group), or,
for the chain, the chain's failing task; the near-miss is the record without a `task`.
Records are written as read (no key is changed): only the sender's host name in the
origin header is redacted afterwards by capture.sh (sed).
"""
import json
import sys

ids_file, snap, outdir = sys.argv[1:4]
suffix = sys.argv[4] if len(sys.argv) > 4 else ''
by_id = {}
for line in open(ids_file):
    case, tid = line.split()
    by_id[tid] = case

out = {}
for line in open(snap, encoding='utf-8'):
    rec = json.loads(line)
    h = rec.get('headers') or {}
    case = None
    if 'task' not in h:
        try:
            body = json.loads(rec.get('body', ''))
            case = by_id.get(body.get('id'))
        except (ValueError, AttributeError):
            pass
        case = case or 'nearmiss-id-no-task'
    elif h.get('task') == 'shop.tasks.invoice':
        case = 'chain'
    else:
        case = by_id.get(h.get('id')) or by_id.get(h.get('group'))
    if case is None:
        sys.exit(f'split.py: no case for the record {line[:200]}')
    out.setdefault(case, []).append(line.rstrip('\n'))

for case, lines in out.items():
    with open(f'{outdir}/{case}{suffix}.jsonl', 'w', encoding='utf-8') as f:
        for line in lines:
            f.write(line + '\n')
    print(case, len(lines))
