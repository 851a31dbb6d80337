#!/usr/bin/env python3
"""Writes dlqx's Spring fixtures (fixtures/spring/*.jsonl and their replay expectations).

Reconstructed, not captured: no JVM here. Every shape follows the framework source cited in
fixtures/spring/SOURCES.md; the stack traces are what Throwable.printStackTrace writes (tab
before "at", "Caused by: " at column 0, "\t... N more", a "\n" after every line), and the
truncation is RepublishMessageRecoverer.truncateIfNecessary's algorithm re-done here on a
broker with frame_max = 32768 (limit = 32768 - 20000 headroom = 12768 characters).

Run from the repository root: python3 tests/frameworks/spring/spring-fixtures.py
"""
import json
import os

OUT = os.path.join("fixtures", "spring")
FETCHED = 1767326645678          # 2026-01-02T03:04:05.678Z
DEATH_S = 1767326400             # 2026-01-02T03:00:00Z
# The ids dlqx derives for the records without a message_id (a name-based UUID of the
# message's identity digest: dialect_derived_id); they change when those records change.
SCS1_ID = "62f6da85-566a-5b27-898d-20837d6e67ce"
BDLX1_ID = "92500d16-5ec6-5b2e-8b18-6ea3208ea4ef"

def i64(v): return {"type": "int64", "value": v}
def ts(v): return {"type": "timestamp", "value": v}

def rec(queue, exchange, rk, props, headers, body):
    r = {"v": 1, "queue": queue, "exchange": exchange, "routing_key": rk, "redelivered": False,
         "fetched_at_ms": FETCHED, "properties": props}
    if headers is not None:
        r["headers"] = headers
    r["body"] = body
    return r

def write(name, records):
    with open(os.path.join(OUT, name), "w") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")

def write_json(name, obj):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(obj, f, indent=1, ensure_ascii=False)
        f.write("\n")

# ---- stack traces (printStackTrace form) ----
CONTAINER_FRAMES = [
    "org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:331)",
    "org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandlerAndProcessResult(MessagingMessageListenerAdapter.java:258)",
    "org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.onMessage(MessagingMessageListenerAdapter.java:178)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1671)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.actualInvokeListener(AbstractMessageListenerContainer.java:1590)",
    "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:580)",
    "org.springframework.aop.support.AopUtils.invokeJoinpointUsingReflection(AopUtils.java:359)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.invokeJoinpoint(ReflectiveMethodInvocation.java:196)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:163)",
    "org.springframework.retry.interceptor.RetryOperationsInterceptor$1.doWithRetry(RetryOperationsInterceptor.java:97)",
    "org.springframework.retry.support.RetryTemplate.doExecute(RetryTemplate.java:335)",
    "org.springframework.retry.support.RetryTemplate.execute(RetryTemplate.java:227)",
    "org.springframework.retry.interceptor.RetryOperationsInterceptor.invoke(RetryOperationsInterceptor.java:123)",
    "org.springframework.aop.framework.ReflectiveMethodInvocation.proceed(ReflectiveMethodInvocation.java:184)",
    "org.springframework.aop.framework.JdkDynamicAopProxy.invoke(JdkDynamicAopProxy.java:223)",
    "jdk.proxy2/jdk.proxy2.$Proxy97.invokeListener(Unknown Source)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.invokeListener(AbstractMessageListenerContainer.java:1578)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doExecuteListener(AbstractMessageListenerContainer.java:1569)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.executeListenerAndHandleException(AbstractMessageListenerContainer.java:1513)",
    "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer.doReceiveAndExecute(SimpleMessageListenerContainer.java:1057)",
    "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer.receiveAndExecute(SimpleMessageListenerContainer.java:1004)",
    "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer$AsyncMessageProcessingConsumer.mainLoop(SimpleMessageListenerContainer.java:1412)",
    "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer$AsyncMessageProcessingConsumer.run(SimpleMessageListenerContainer.java:1318)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
]
HANDLER_FRAMES = [
    "java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:580)",
    "org.springframework.messaging.handler.invocation.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:169)",
    "org.springframework.messaging.handler.invocation.InvocableHandlerMethod.invoke(InvocableHandlerMethod.java:119)",
    "org.springframework.amqp.rabbit.listener.adapter.HandlerAdapter.invoke(HandlerAdapter.java:75)",
    "org.springframework.amqp.rabbit.listener.adapter.MessagingMessageListenerAdapter.invokeHandler(MessagingMessageListenerAdapter.java:322)",
]
LEFE = ("org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method "
        "'public void com.acme.orders.OrderListener.onOrder(com.acme.orders.OrderPlaced)' threw exception")

def frames(lines, indent="\t"):
    return "".join(f"{indent}at {l}\n" for l in lines)

def trace(head, causes, head_frames=CONTAINER_FRAMES):
    """causes: list of (toString text, own frames, common-frame count)."""
    s = head + "\n" + frames(head_frames)
    for text, own, more in causes:
        s += "Caused by: " + text + "\n" + frames(own)
        if more:
            s += f"\t... {more} more\n"
    return s

MSG_DECLINED = "Card declined for order A-1001"
TRACE_SIMPLE = trace(LEFE, [
    ("com.acme.orders.PaymentDeclinedException: " + MSG_DECLINED,
     ["com.acme.orders.PaymentClient.charge(PaymentClient.java:58)",
      "com.acme.orders.OrderListener.onOrder(OrderListener.java:31)"] + HANDLER_FRAMES, 24),
])

ORDER_PROPS = {"content_type": "application/json", "content_encoding": "UTF-8",
               "message_id": "6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a01", "delivery_mode": 2, "priority": 0}
ORDER_BODY = '{"orderId":"A-1001","total":42.50,"currency":"EUR"}'
TYPE_ID = "com.acme.orders.OrderPlaced"

# ---- 1. RepublishMessageRecoverer, stack trace included (<= 4.0.4, or includeStackTrace(true)) ----
# new RepublishMessageRecoverer(template, "errors"): routing key "error." + received routing key.
r1 = rec("error.orders", "errors", "error.orders", dict(ORDER_PROPS), {
    "__TypeId__": TYPE_ID,
    "x-exception-stacktrace": TRACE_SIMPLE,
    "x-exception-message": MSG_DECLINED,
    "x-original-exchange": "",
    "x-original-routingKey": "orders",
}, ORDER_BODY)
write("republish-stacktrace.jsonl", [r1])
replay1 = {"v": 1, "queue": "orders", "exchange": "", "routing_key": "orders", "properties": dict(ORDER_PROPS),
    "headers": dict(r1["headers"]) | {"retry-count": i64(1)}, "body": ORDER_BODY}
write("republish-stacktrace.replay.jsonl", [replay1])

write_json("republish-stacktrace.expect.json", [{
    "dialect": "spring", "id": ORDER_PROPS["message_id"], "type": TYPE_ID,
    "correlation_id": ORDER_PROPS["message_id"], "causation_id": None, "attempt": 1,
    "error_type": "com.acme.orders.PaymentDeclinedException", "error_message": MSG_DECLINED,
    "error": "com.acme.orders.PaymentDeclinedException: " + MSG_DECLINED, "error_from_broker": False,
    "stack_trace": TRACE_SIMPLE, "failed_at_ms": None, "accepted": True,
    "source": {"queue": "orders", "exchange": "", "routing_key": "orders", "how": "x-original-routingKey"},
    "recognised": {"confidence": 95},
    "spring": {"flavour": "republish", "type_id": TYPE_ID, "original_exchange": "", "original_routing_key": "orders",
               "retry_count": None, "exception_types": ["org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
                                                        "com.acme.orders.PaymentDeclinedException"],
               "stack_trace_truncated": False, "exception_message_truncated": False},
}])

# ---- 2. RepublishMessageRecoverer >= 4.0.5 default: no stack trace ----
r2props = dict(ORDER_PROPS, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a02", correlation_id="order-A-1002")
r2 = rec("error.orders", "errors", "error.orders", r2props, {
    "__TypeId__": TYPE_ID,
    "x-exception-message": "Card declined for order A-1002",
    "x-original-exchange": "",
    "x-original-routingKey": "orders",
}, '{"orderId":"A-1002","total":9.99,"currency":"EUR"}')
write("republish-no-stacktrace.jsonl", [r2])
write_json("republish-no-stacktrace.expect.json", [{
    "dialect": "spring", "id": r2props["message_id"], "type": TYPE_ID, "correlation_id": "order-A-1002",
    "causation_id": None, "attempt": 1, "error_type": None, "error_message": "Card declined for order A-1002",
    "error": "Card declined for order A-1002", "error_from_broker": False, "stack_trace": None, "failed_at_ms": None,
    "source": {"queue": "orders", "exchange": "", "routing_key": "orders"},
    "spring": {"flavour": "republish", "original_exchange": "", "original_routing_key": "orders", "exception_types": []},
}])

# ---- 3. nested Caused by (innermost wins), multi-line messages, a Suppressed block ----
DIVE_MSG = ('could not execute statement [ERROR: duplicate key value violates unique constraint "invoice_pkey"\n'
            '  Detail: Key (id)=(17) already exists.] [insert into invoice (amount,id) values (?,?)]; '
            'SQL [insert into invoice (amount,id) values (?,?)]; constraint [invoice_pkey]')
HIB_MSG = ('could not execute statement [ERROR: duplicate key value violates unique constraint "invoice_pkey"\n'
           '  Detail: Key (id)=(17) already exists.] [insert into invoice (amount,id) values (?,?)]')
PG_MSG = 'ERROR: duplicate key value violates unique constraint "invoice_pkey"\n  Detail: Key (id)=(17) already exists.'
SUPPRESSED = ("\tSuppressed: org.springframework.transaction.TransactionSystemException: Could not roll back JPA transaction\n"
              "\t\tat org.springframework.orm.jpa.JpaTransactionManager.doRollback(JpaTransactionManager.java:593)\n"
              "\t\t... 12 more\n"
              "\tCaused by: java.net.SocketException: Connection reset\n"
              "\t\tat java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:318)\n"
              "\t\t... 14 more\n")
TRACE_NESTED = (LEFE.replace("OrderListener.onOrder(com.acme.orders.OrderPlaced)",
                             "InvoiceListener.onInvoice(com.acme.billing.InvoiceIssued)")
                + "\n" + frames(CONTAINER_FRAMES)
                + "Caused by: org.springframework.dao.DataIntegrityViolationException: " + DIVE_MSG + "\n"
                + frames(["org.springframework.orm.jpa.vendor.HibernateJpaDialect.convertHibernateAccessException(HibernateJpaDialect.java:290)",
                          "org.springframework.orm.jpa.vendor.HibernateJpaDialect.translateExceptionIfPossible(HibernateJpaDialect.java:241)",
                          "org.springframework.orm.jpa.JpaTransactionManager.doCommit(JpaTransactionManager.java:565)",
                          "com.acme.billing.InvoiceListener.onInvoice(InvoiceListener.java:44)"] + HANDLER_FRAMES)
                + "\t... 24 more\n"
                + SUPPRESSED
                + "Caused by: org.hibernate.exception.ConstraintViolationException: " + HIB_MSG + "\n"
                + frames(["org.hibernate.exception.internal.SQLStateConversionDelegate.convert(SQLStateConversionDelegate.java:97)",
                          "org.hibernate.exception.internal.StandardSQLExceptionConverter.convert(StandardSQLExceptionConverter.java:58)",
                          "org.hibernate.engine.jdbc.spi.SqlExceptionHelper.convert(SqlExceptionHelper.java:108)"])
                + "\t... 38 more\n"
                + "Caused by: org.postgresql.util.PSQLException: " + PG_MSG + "\n"
                + frames(["org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)",
                          "org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2412)",
                          "org.postgresql.jdbc.PgPreparedStatement.executeUpdate(PgPreparedStatement.java:152)"])
                + "\t... 47 more\n")
INV_PROPS = {"content_type": "application/json", "content_encoding": "UTF-8",
             "message_id": "0c3e5b8a-7d21-4f0e-8b6a-1d2e3f4a5b6c", "delivery_mode": 2, "priority": 0}
r3 = rec("billing.errors", "errors", "billing.errors", INV_PROPS, {
    "__TypeId__": "com.acme.billing.InvoiceIssued",
    "x-exception-stacktrace": TRACE_NESTED,
    "x-exception-message": DIVE_MSG,
    "x-original-exchange": "billing",
    "x-original-routingKey": "invoice.issued",
}, '{"invoiceId":17,"amount":12.50}')
write("republish-nested-cause.jsonl", [r3])
# Replay through the original exchange (no x-death, no .dlq name, not the default exchange):
# the copy reaches every queue bound to `billing` with `invoice.issued` (here one, a queue of
# the application's: billing.invoices) - the route the binder docs' partitioned example takes.
write("republish-nested-cause.replay.jsonl", [
    {"v": 1, "queue": "billing.invoices", "exchange": "billing", "routing_key": "invoice.issued",
     "properties": dict(INV_PROPS), "headers": dict(r3["headers"]) | {"retry-count": i64(1)},
     "body": r3["body"]}])
write_json("republish-nested-cause.expect.json", [{
    "dialect": "spring", "id": INV_PROPS["message_id"], "type": "com.acme.billing.InvoiceIssued",
    "correlation_id": INV_PROPS["message_id"], "causation_id": None, "attempt": 1,
    "error_type": "org.postgresql.util.PSQLException", "error_message": DIVE_MSG,
    "stack_trace": TRACE_NESTED, "failed_at_ms": None,
    "source": {"queue": None, "exchange": "billing", "routing_key": "invoice.issued", "how": "x-original-exchange"},
    "spring": {"flavour": "republish", "original_exchange": "billing", "original_routing_key": "invoice.issued",
               "exception_types": ["org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
                                   "org.springframework.dao.DataIntegrityViolationException",
                                   "org.hibernate.exception.ConstraintViolationException",
                                   "org.postgresql.util.PSQLException"],
               "root_cause_message": 'ERROR: duplicate key value violates unique constraint "invoice_pkey"',
               "stack_trace_truncated": False},
}])

# ---- 4. truncation (RepublishMessageRecoverer.truncateIfNecessary, frame_max 32768) ----
MAX = 32768 - 20000
def truncate_if_necessary(exc_msg, st):
    tmsg = exc_msg if len(exc_msg) <= 97 else exc_msg[:97] + "..."
    truncated = False
    if len(st) + len(exc_msg) > MAX:
        if exc_msg != tmsg:
            i = st.index(exc_msg)
            st = st[:i] + tmsg + st[i + len(exc_msg):]
        adj = MAX - len(tmsg)
        if adj > 0:
            if len(st) > adj:
                st = st[:adj]; truncated = True
            elif len(st) + len(exc_msg) > MAX:
                tmsg = exc_msg[:MAX - len(st) - 3] + "..."; truncated = True
    return st, (tmsg if truncated else exc_msg)

LONG_MSG = "Order A-1003 failed validation: " + "; ".join(
    f"line {n}: sku 'SKU-{n:05d}' is not sold in region EU-WEST-{n % 7}" for n in range(1, 41))
deep = [f"com.acme.validation.RuleTree.visit(RuleTree.java:{100 + (n % 9)})" for n in range(260)]
full4 = trace(LEFE, [("com.acme.orders.OrderValidationException: " + LONG_MSG,
                      ["com.acme.validation.RuleTree.fail(RuleTree.java:77)"] + deep + HANDLER_FRAMES, 24)])
st4, msg4 = truncate_if_necessary(LONG_MSG, full4)
assert len(st4) == MAX - 100 and msg4 == LONG_MSG[:97] + "..." and not st4.endswith("\n")
HUGE_MSG = "Rejected payload: " + ("0123456789abcdef" * 800)
full5 = trace(LEFE, [("java.lang.IllegalArgumentException: " + HUGE_MSG,
                      ["com.acme.orders.OrderListener.onOrder(OrderListener.java:29)"] + HANDLER_FRAMES, 24)])
st5, msg5 = truncate_if_necessary(HUGE_MSG, full5)
assert len(st5) + len(msg5) == MAX and msg5.endswith("...") and st5.endswith("\n")
p4 = dict(ORDER_PROPS, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a03")
p5 = dict(ORDER_PROPS, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a04")
def rep_headers(st, msg):
    return {"__TypeId__": TYPE_ID, "x-exception-stacktrace": st, "x-exception-message": msg,
            "x-original-exchange": "", "x-original-routingKey": "orders"}
write("republish-truncated.jsonl", [
    rec("error.orders", "errors", "error.orders", p4, rep_headers(st4, msg4), '{"orderId":"A-1003"}'),
    rec("error.orders", "errors", "error.orders", p5, rep_headers(st5, msg5), '{"orderId":"A-1004"}'),
])
write_json("republish-truncated.expect.json", [
    {"dialect": "spring", "id": p4["message_id"], "type": TYPE_ID, "correlation_id": p4["message_id"],
     "causation_id": None, "attempt": 1, "error_type": "com.acme.orders.OrderValidationException",
     "error_message": msg4, "stack_trace": st4, "failed_at_ms": None,
     "source": {"queue": "orders", "exchange": "", "routing_key": "orders"},
     "spring": {"stack_trace_truncated": True, "exception_message_truncated": True,
                "root_cause_message": LONG_MSG[:97] + "..."}},
    {"dialect": "spring", "id": p5["message_id"], "type": TYPE_ID, "correlation_id": p5["message_id"],
     "causation_id": None, "attempt": 1, "error_type": "java.lang.IllegalArgumentException",
     "error_message": msg5, "stack_trace": st5, "failed_at_ms": None,
     "source": {"queue": "orders", "exchange": "", "routing_key": "orders"},
     "spring": {"stack_trace_truncated": False, "exception_message_truncated": True}},
])

# ---- 5. Spring Cloud Stream rabbit binder DLQ (republishToDlq=true, autoBindDlq=true) ----
SCS_HEAD = ("org.springframework.messaging.MessageHandlingException: error occurred in message handler "
            "[org.springframework.cloud.stream.function.FunctionConfiguration$FunctionToDestinationBinder$1@5c6f8b2e], "
            "failedMessage=GenericMessage [payload=byte[31], headers={amqp_receivedDeliveryMode=PERSISTENT, "
            "amqp_receivedExchange=orders, amqp_deliveryTag=1, deliveryAttempt=3, amqp_consumerQueue=orders.billing, "
            "amqp_redelivered=false, amqp_receivedRoutingKey=orders, id=7a0c1d2e-3f40-5162-7384-95a6b7c8d9e0, "
            "contentType=application/json, timestamp=1767326399000}]")
SCS_FRAMES = [
    "org.springframework.integration.support.utils.IntegrationUtils.wrapInHandlingExceptionIfNecessary(IntegrationUtils.java:191)",
    "org.springframework.integration.handler.AbstractMessageHandler.doHandleMessage(AbstractMessageHandler.java:108)",
    "org.springframework.integration.handler.AbstractMessageHandler.handleMessage(AbstractMessageHandler.java:73)",
    "org.springframework.integration.dispatcher.AbstractDispatcher.tryOptimizedDispatch(AbstractDispatcher.java:132)",
    "org.springframework.integration.dispatcher.UnicastingDispatcher.doDispatch(UnicastingDispatcher.java:133)",
    "org.springframework.integration.dispatcher.UnicastingDispatcher.dispatch(UnicastingDispatcher.java:106)",
    "org.springframework.integration.channel.AbstractSubscribableChannel.doSend(AbstractSubscribableChannel.java:72)",
    "org.springframework.integration.channel.AbstractMessageChannel.sendInternal(AbstractMessageChannel.java:378)",
    "org.springframework.integration.channel.AbstractMessageChannel.send(AbstractMessageChannel.java:332)",
    "org.springframework.messaging.core.GenericMessagingTemplate.doSend(GenericMessagingTemplate.java:187)",
    "org.springframework.integration.endpoint.MessageProducerSupport.sendMessage(MessageProducerSupport.java:223)",
    "org.springframework.integration.amqp.inbound.AmqpInboundChannelAdapter.access$2000(AmqpInboundChannelAdapter.java:69)",
    "org.springframework.integration.amqp.inbound.AmqpInboundChannelAdapter$Listener.lambda$onMessage$0(AmqpInboundChannelAdapter.java:386)",
    "org.springframework.retry.support.RetryTemplate.doExecute(RetryTemplate.java:335)",
    "org.springframework.retry.support.RetryTemplate.execute(RetryTemplate.java:227)",
    "org.springframework.integration.amqp.inbound.AmqpInboundChannelAdapter$Listener.onMessage(AmqpInboundChannelAdapter.java:381)",
    "org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1671)",
    "org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer$AsyncMessageProcessingConsumer.run(SimpleMessageListenerContainer.java:1318)",
    "java.base/java.lang.Thread.run(Thread.java:1583)",
]
def scs_trace(msg):
    return trace(SCS_HEAD, [("java.lang.IllegalStateException: " + msg,
        ["com.acme.billing.BillingFunctions.lambda$charge$0(BillingFunctions.java:31)",
         "org.springframework.cloud.function.context.catalog.SimpleFunctionRegistry$FunctionInvocationWrapper.invokeConsumer(SimpleFunctionRegistry.java:1055)",
         "org.springframework.cloud.function.context.catalog.SimpleFunctionRegistry$FunctionInvocationWrapper.doApply(SimpleFunctionRegistry.java:749)",
         "org.springframework.cloud.stream.function.FunctionConfiguration$FunctionToDestinationBinder$1.handleMessageInternal(FunctionConfiguration.java:682)",
         "org.springframework.integration.handler.AbstractMessageHandler.doHandleMessage(AbstractMessageHandler.java:105)"], 18)],
        head_frames=SCS_FRAMES)
SCS_PROPS = {"content_type": "application/json", "delivery_mode": 2, "priority": 0}
SCS_BODY = '{"invoiceId":17,"amount":12.50}'
def scs_headers(msg, count):
    return {"contentType": "application/json", "x-exception-stacktrace": scs_trace(msg),
            "x-exception-message": msg, "x-original-exchange": "orders", "x-original-routingKey": "orders",
            "retry-count": i64(count)}
s1 = rec("orders.billing.dlq", "DLX", "orders.billing", dict(SCS_PROPS), scs_headers("Invoice 17 not found", 1), SCS_BODY)
s2props = dict(SCS_PROPS, message_id="2b9d4c1a-8e7f-4a6b-9c0d-1e2f3a4b5c6d", correlation_id="billing-run-2026-01-02")
s2 = rec("orders.billing.dlq", "DLX", "orders.billing", s2props, scs_headers("Invoice 18 not found", 3),
         '{"invoiceId":18,"amount":7.00}')
write("scst-dlq.jsonl", [s1, s2])
def replayed(r, count, target):
    h = dict(r["headers"]); h["retry-count"] = i64(count)
    return {"v": 1, "queue": target, "exchange": "", "routing_key": target,
            "properties": dict(r["properties"]), "headers": h, "body": r["body"]}
write("scst-dlq.replay.jsonl", [replayed(s1, 2, "orders.billing"), replayed(s2, 4, "orders.billing")])
def reissued(r, corr, target):
    h = {k: v for k, v in r["headers"].items()
         if k not in ("x-exception-stacktrace", "x-exception-message", "x-original-exchange",
                      "x-original-routingKey", "retry-count")}
    p = dict(r["properties"]); p["message_id"] = "<uuid>"; p["correlation_id"] = corr
    return {"v": 1, "queue": target, "exchange": "", "routing_key": target, "properties": p, "headers": h,
            "body": r["body"]}
write("scst-dlq.reissue.jsonl", [reissued(s1, "<uuid>", "orders.billing"),
                                 reissued(s2, "billing-run-2026-01-02", "orders.billing")])
write_json("scst-dlq.expect.json", [
    {"dialect": "spring", "id": SCS1_ID, "correlation_id": SCS1_ID, "type": "orders.billing",
     "causation_id": None, "attempt": 1,
     "error_type": "java.lang.IllegalStateException", "error_message": "Invoice 17 not found",
     "error": "java.lang.IllegalStateException: Invoice 17 not found", "error_from_broker": False,
     "stack_trace": scs_trace("Invoice 17 not found"), "failed_at_ms": None,
     "source": {"queue": "orders.billing", "exchange": "", "routing_key": "orders.billing", "how": "dlq-name"},
     "recognised": {"confidence": 95, "by": ["x-exception-message", "x-original-routingKey"]},
     "spring": {"flavour": "cloud-stream", "consumer_queue": "orders.billing", "destination": "orders", "group": "billing",
                "retry_count": 1, "original_exchange": "orders", "original_routing_key": "orders",
                "exception_types": ["org.springframework.messaging.MessageHandlingException",
                                    "java.lang.IllegalStateException"]}},
    {"dialect": "spring", "id": s2props["message_id"], "correlation_id": "billing-run-2026-01-02",
     "causation_id": None, "attempt": 3, "error_type": "java.lang.IllegalStateException",
     "error_message": "Invoice 18 not found", "failed_at_ms": None,
     "source": {"queue": "orders.billing", "exchange": "", "routing_key": "orders.billing", "how": "dlq-name"},
     "spring": {"flavour": "cloud-stream", "retry_count": 3}},
])

# ---- 6. broker DLX'd Spring message (RejectAndDontRequeueRecoverer / republishToDlq=false) ----
def xdeath(count, queue="orders", exchange="orders.exchange", rk="order.placed"):
    return [{"count": count, "reason": "rejected", "queue": queue, "time": ts(DEATH_S),
             "exchange": exchange, "routing-keys": [rk]}]
b_props1 = {"content_type": "application/json", "content_encoding": "UTF-8", "delivery_mode": 2, "priority": 0}
b1 = rec("orders.dlq", "orders.dlx", "order.placed", b_props1, {
    "__TypeId__": TYPE_ID, "x-death": xdeath(1),
    "x-first-death-exchange": "orders.exchange", "x-first-death-queue": "orders", "x-first-death-reason": "rejected",
}, '{"orderId":"A-1005","total":1.00,"currency":"EUR"}')
b_props2 = dict(b_props1, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a06")
b2 = rec("orders.dlq", "orders.dlx", "order.placed", b_props2, {
    "__TypeId__": TYPE_ID, "retry-count": i64(2), "x-death": xdeath(3),
    "x-first-death-exchange": "orders.exchange", "x-first-death-queue": "orders", "x-first-death-reason": "rejected",
}, '{"orderId":"A-1006","total":2.00,"currency":"EUR"}')
write("broker-dlx.jsonl", [b1, b2])
write("broker-dlx.replay.jsonl", [
    {"v": 1, "queue": "orders", "exchange": "", "routing_key": "orders", "properties": dict(b_props1),
     "headers": {"__TypeId__": TYPE_ID, "retry-count": i64(2)}, "body": b1["body"]},
    {"v": 1, "queue": "orders", "exchange": "", "routing_key": "orders", "properties": dict(b_props2),
     "headers": {"__TypeId__": TYPE_ID, "retry-count": i64(3)}, "body": b2["body"]},
])
DEATH_ERR = "dead-lettered by the broker: rejected from orders"
write_json("broker-dlx.expect.json", [
    {"dialect": "spring", "id": BDLX1_ID, "correlation_id": BDLX1_ID, "type": TYPE_ID,
     "causation_id": None, "attempt": 1,
     "error_type": None, "error_message": None, "error": DEATH_ERR, "error_from_broker": True,
     "stack_trace": None, "failed_at_ms": DEATH_S * 1000,
     "source": {"queue": "orders", "exchange": "", "routing_key": "orders", "how": "x-death"},
     "spring": {"flavour": "broker-dlx", "type_id": TYPE_ID, "retry_count": None}},
    {"dialect": "spring", "id": b_props2["message_id"], "type": TYPE_ID, "correlation_id": b_props2["message_id"],
     "causation_id": None, "attempt": 2, "error_type": None, "error_message": None, "error": DEATH_ERR,
     "failed_at_ms": DEATH_S * 1000,
     "source": {"queue": "orders", "exchange": "", "routing_key": "orders", "how": "x-death"},
     "spring": {"flavour": "broker-dlx", "retry_count": 2}},
])

# ---- 7. collections: __TypeId__ + __ContentTypeId__ (Jackson2JavaTypeMapper) ----
c1 = rec("orders.dlq", "orders.dlx", "orders.batch", dict(b_props1, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a07"), {
    "__ContentTypeId__": "com.acme.orders.OrderLine", "__TypeId__": "java.util.ArrayList",
    "x-death": xdeath(2, exchange="", rk="orders.batch", queue="orders.batch"),
    "x-first-death-exchange": "", "x-first-death-queue": "orders.batch", "x-first-death-reason": "rejected",
}, '[{"sku":"SKU-1","qty":2}]')
write("typeid-collection.jsonl", [c1])
write_json("typeid-collection.expect.json", [
    {"dialect": "spring", "id": "6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a07", "type": "java.util.ArrayList",
     "correlation_id": "6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a07", "causation_id": None, "attempt": 2,
     "error_type": None, "error_message": None, "failed_at_ms": DEATH_S * 1000,
     "source": {"queue": "orders.batch", "exchange": "", "routing_key": "orders.batch", "how": "x-death"},
     "spring": {"type_id": "java.util.ArrayList", "content_type_id": "com.acme.orders.OrderLine", "key_type_id": None}},
])

# ---- near-misses ----
n1 = rec("orders", "", "orders", dict(ORDER_PROPS, message_id="6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a08"),
         {"__TypeId__": TYPE_ID}, ORDER_BODY)
write("nearmiss-typeid-only.jsonl", [n1])
write_json("nearmiss-typeid-only.expect.json", [
    {"dialect": "spring", "id": "6f1f2c1e-4a1b-4c57-9a55-3c0e8f1d2a08", "type": TYPE_ID, "attempt": 1,
     "error": None, "error_type": None, "error_message": None, "error_from_broker": False, "failed_at_ms": None,
     "accepted": True, "spring": {"flavour": "message"}},
])
n2 = rec("parked", "", "parked", {"content_type": "text/plain", "message_id": "nm-2"},
         {"x-original-exchange": "orders", "x-original-routingKey": "orders", "retry-count": i64(4)}, "hello")
n3 = rec("orders.dlq", "orders.dlx", "orders", {"content_type": "text/plain", "message_id": "nm-3"},
         {"x-death": xdeath(1, exchange="", rk="orders")}, "plain")
write("nearmiss-amqp.jsonl", [n2, n3])
write_json("nearmiss-amqp.expect.json", [{"dialect": "amqp", "id": "nm-2"}, {"dialect": "amqp", "id": "nm-3"}])

# ---- hostile ----
ESC_MSG = "Card declined \x1b]52;c;ZWNobyBwd25lZA==\x07 then \x1b[2J\x1b[31mred\x9b31m"
HOSTILE_TRACE = ("org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener failed\r\n"
                 "\tat a.B.c(B.java:1)\x00nul\r\n"
                 "Caused by: com.acme.Real1Exception: first\r\n"
                 "\tat a.B.c(B.java:2)\r\n"
                 "Caused by: \x1b[31mevil.Type\x1b[0m: not a type\r\n"
                 "\tat a.B.c(B.java:3)\r\n"
                 "Caused by: " + ("a." * 3000) + "Long: too long a type\r\n"
                 "\tat a.B.c(B.java:4)\r\n"
                 "Caused by:no.Space: x\r\n"
                 "Caused by: \r\n"
                 "\tat a.B.c(B.java:5)\r\n"
                 "Caused by: com.acme.Real2Exception\r\n"
                 "\tat a.B.c(B.java:6)\r\n"
                 "Caused by: com.acme.Real3Exception: a message of two lines\r\n"
                 "the second line\r\n"
                 "Caused by: com.acme.Fake: this one follows a message line, not a frame\r\n"
                 "\tat a.B.c(B.java:7)\r\n")
h1 = rec("error.orders", "errors", "error.orders", {"content_type": "application/json", "message_id": "h-1"}, {
    "__TypeId__": {"type": "bytes", "value": "com.acme.orders.OrderPlaced"},
    "x-exception-message": {"type": "int32", "value": 42},
    "x-exception-stacktrace": {"type": "table", "value": {"a": 1}},
    "x-original-exchange": {"a": "b"},
    "x-original-routingKey": None,
    "retry-count": "7",
}, "{}")
h2 = rec("error.orders", "errors", "error.orders", {"content_type": "application/json", "message_id": "h-2"}, {
    "x-exception-stacktrace": {"type": "bytes", "value": HOSTILE_TRACE},
    "x-exception-message": ESC_MSG,
    "x-original-exchange": "",
    "x-original-routingKey": "orders\x1b[2J",
    "retry-count": {"type": "int32", "value": 5},
}, "")
del h2["body"]; h2["body_base64"] = "//79AAEC"
write("hostile.jsonl", [h1, h2])
write_json("hostile.expect.json", [
    {"dialect": "spring", "id": "h-1", "attempt": 1, "error_message": None, "stack_trace": None, "error_type": None,
     "spring": {"original_exchange": None, "original_routing_key": None, "retry_count": None}},
    {"dialect": "spring", "id": "h-2", "attempt": 5, "error_type": "com.acme.Real3Exception",
     "error_message": ESC_MSG,
     "spring": {"retry_count": 5, "exception_types": ["org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
                                                      "com.acme.Real1Exception", "com.acme.Real2Exception",
                                                      "com.acme.Real3Exception"]}},
])
print("written to", OUT)
