"""Sends the fixture cases with the real Celery client (test-only; see capture.sh).

usage: publish.py declare | send | send-protocol1 | near-miss | move ID EXCHANGE ROUTING_KEY
Prints one line per sent task: CASE TASK_ID.
"""
import datetime
import sys

from celery import chain, group
from kombu import Exchange, Producer, Queue

import app as shop
from app import app


def declare():
    """The DLX and the DLQ (the task queues are declared by Celery itself)."""
    with app.connection_for_write() as conn:
        ch = conn.channel()
        dlx = Exchange('celery.dlx', type='direct', durable=True)
        Queue('celery.dlq', dlx, routing_key='celery.dlq', durable=True)(ch).declare()
        for q in app.conf.task_queues:
            q(ch).declare()


def send():
    now = datetime.datetime.now(datetime.timezone.utc)
    r = shop.charge.apply_async(('A-1001', 4999), {'currency': 'EUR'})
    print('reject', r.id)
    r = shop.ship.apply_async(('A-1002',), {'address': "Rue de l'Été 5, Liège",
                                            'express': True})
    print('exception', r.id)
    r = shop.sync_stock.apply_async(('SKU-42',))
    print('retried', r.id)
    c = chain(shop.add.s(2, 3), shop.add.s(10), shop.invoice.s(customer='ACME'),
              shop.notify.s()).apply_async()
    print('chain', c.id)
    r = shop.ship.apply_async(('A-1003',), eta=now + datetime.timedelta(seconds=1),
                              expires=now + datetime.timedelta(days=2),
                              time_limit=300, soft_time_limit=240.5)
    print('eta', r.id)
    # Custom headers go into the message's headers as py-amqp types them: an int over
    # 2^31-1 is L (signed 64-bit), None is V, a float d, a list A, a dict F.
    r = shop.ship.apply_async(('A-1004',), {'address': 'Main St 1', 'express': False},
                              headers={'tenant_id': 5000000000, 'trace': None,
                                       'weight': 1.5, 'tags': ['b2b', 7],
                                       'meta': {'src': 'api', 'n': -1}})
    print('kwargs-headers', r.id)
    r = app.send_task('shop.tasks.gone', args=[1, 'x'], kwargs={'k': None})
    print('unknown-task', r.id)
    r = shop.charge.apply_async(('A-1005', 10), serializer='pickle')
    print('undecodable-pickle', r.id)
    g = group(shop.ship.s('G-1'), shop.ship.s('G-2')).apply_async()
    print('group', g.id)
    r = shop.refund.apply_async(('R-7', 12.5), queue='tasks')
    print('default-exchange', r.id)


def send_live():
    """The live test's tasks: two refunds (they fail until the flag exists) and a chain."""
    r = shop.refund.apply_async(('R-7', 12.5), queue='tasks')
    print('replay', r.id)
    r = shop.refund.apply_async(('R-8', 3), {}, queue='tasks')
    print('reissue', r.id)
    c = chain(shop.add.s(2, 3), shop.invoice.s(customer='ACME')).apply_async()
    print('chain', c.id)
    r = shop.charge.apply_async(('A-1001', 4999), {'currency': 'EUR'})
    print('reject', r.id)


def send_protocol1():
    """Protocol 1 (CELERY_DLQX_PROTOCOL=1): everything in the body, no task headers."""
    r = shop.charge.apply_async(('A-2001', 100), {'currency': 'USD'})
    print('protocol1', r.id)


def near_miss():
    """Not Celery tasks, sent to Celery's queue: the worker rejects them too."""
    with app.connection_for_write() as conn:
        p = Producer(conn.channel())
        ex = Exchange('celery', type='direct')
        p.publish({'order': 'A-3001'}, exchange=ex, routing_key='celery',
                  headers={'id': '0b7e1c9a-3f52-4d8e-9a61-2c4b5d6e7f80'},
                  serializer='json')
        print('nearmiss-id-no-task', '-')


def move(task_id, exchange, routing_key):
    """Celery's own move (celery.contrib.migrate.move -> republish) of one dead letter."""
    from celery.contrib.migrate import move as celery_move

    def pick(body, message):
        if message.headers.get('id') == task_id:
            return (exchange, routing_key)
        return None

    # move()'s consumer decodes every body before the predicate sees it: with the worker's
    # accept list (json) it raises ContentDisallowed at the pickled dead letter and stops.
    # The pickle is this script's own message.
    celery_move(pick, app=app, source=['celery.dlq'], limit=None, timeout=2.0,
                        connection=app.connection_for_write(),
                        accept=['json', 'pickle'])


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'declare':
        declare()
    elif cmd == 'send':
        send()
    elif cmd == 'send-live':
        send_live()
    elif cmd == 'send-protocol1':
        send_protocol1()
    elif cmd == 'near-miss':
        near_miss()
    elif cmd == 'move':
        move(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit('usage: publish.py declare|send|move ID EXCHANGE ROUTING_KEY')
