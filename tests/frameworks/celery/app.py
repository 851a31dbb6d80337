"""The Celery application of the dlqx Celery fixtures and live test (test-only).

A task queue whose dead letters go through the broker's dead-letter exchange (Celery has no
error queue of its own), and tasks that end in each of the ways a real worker rejects a
message with requeue=False: Reject, an exception under acks_late with
acks_on_failure_or_timeout=False, a retried task that then fails, a step of a chain.

The broker is the private node of scripts/broker: DLQX_AMQP_PORT and DLQX_PASSWORD_FILE
from its env file. The password is read from the file, never put on a command line.
"""
import os

from celery import Celery
from celery.exceptions import Reject
from kombu import Exchange, Queue

PORT = os.environ.get('DLQX_AMQP_PORT', '5672')
PASSWORD_FILE = os.environ.get('DLQX_PASSWORD_FILE')
PASSWORD = open(PASSWORD_FILE).read().strip() if PASSWORD_FILE else 'guest'
USER = os.environ.get('DLQX_BROKER_USER', 'dlqx')
# Where the live test's "fixed" task looks: absent on the first run (fails), present after.
FLAG = os.environ.get('CELERY_DLQX_FLAG', '/nonexistent/dlqx-celery-flag')
DONE = os.environ.get('CELERY_DLQX_DONE', '')

app = Celery('shop', broker=f'amqp://{USER}:{PASSWORD}@127.0.0.1:{PORT}//')

# Celery's default queue, exchange and routing key ("celery"), with the broker's
# dead-letter exchange "celery.dlx" into "celery.dlq"; and "tasks", a queue reached through
# the default exchange, dead-lettering into the same DLQ.
dlx_args = {'x-dead-letter-exchange': 'celery.dlx',
            'x-dead-letter-routing-key': 'celery.dlq'}
app.conf.update(
    task_queues=[
        Queue('celery', Exchange('celery', type='direct'), routing_key='celery',
              queue_arguments=dlx_args),
        Queue('tasks', Exchange(''), routing_key='tasks', queue_arguments=dlx_args),
    ],
    task_default_queue='celery',
    task_acks_late=True,
    task_acks_on_failure_or_timeout=False,  # a failure is rejected (requeue=False): the DLX
    task_reject_on_worker_lost=False,
    worker_prefetch_multiplier=1,
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    accept_content=['json'],
    result_backend=None,
    # Protocol 1 (everything in the body, no task headers) for the protocol-1 case only.
    task_protocol=int(os.environ.get('CELERY_DLQX_PROTOCOL', '2')),
)


@app.task(name='shop.tasks.charge', bind=True)
def charge(self, order_id, amount, currency='EUR'):
    """Refuses the order: Celery's Reject, never requeued."""
    raise Reject(f'card declined for {order_id}', requeue=False)


@app.task(name='shop.tasks.ship')
def ship(order_id, address=None, express=False):
    """Fails with an exception: acks_late + acks_on_failure_or_timeout=False rejects it."""
    raise ValueError(f'no carrier serves {address!r}')


@app.task(name='shop.tasks.sync_stock', bind=True, max_retries=2)
def sync_stock(self, sku):
    """Retries twice (retry() re-sends the task with retries+1), then fails for good."""
    if self.request.retries < 2:
        raise self.retry(countdown=0.2)
    raise ConnectionError(f'warehouse API down for {sku}')


@app.task(name='shop.tasks.add')
def add(x, y):
    return x + y


@app.task(name='shop.tasks.invoice')
def invoice(total, customer=None):
    """The failing step of a chain: its parent is the step before, its root the first."""
    raise RuntimeError(f'invoice template missing for {customer}')


@app.task(name='shop.tasks.notify')
def notify(total):
    return total


@app.task(name='shop.tasks.refund', bind=True)
def refund(self, order_id, amount):
    """The live test's task: fails until the flag file exists, then succeeds."""
    if not os.path.exists(FLAG):
        raise RuntimeError(f'refund service unavailable for {order_id}')
    if DONE:
        r = self.request
        with open(DONE, 'a') as f:
            f.write(f'{r.id} {order_id} {amount} retries={r.retries} parent={r.parent_id} '
                    f'root={r.root_id}\n')
    return amount
