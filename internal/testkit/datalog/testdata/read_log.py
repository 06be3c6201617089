"""Reads hookstream's events topic with confluent-kafka, the way docs/consuming-the-log.md says.

    read_log.py DOC all BOOTSTRAP TOPIC
        every partition from its start, read_committed, to the end of the committed log
    read_log.py DOC partner BOOTSTRAP TOPIC PARTNER WANT [CURSOR]
        the doc's own snippets, run as written: partition_for picks the partner's partition and
        the doc's consumer reads it (from OFFSET_BEGINNING, or from the offset of a feed cursor
        decoded by the doc's cursor_position); it stops WANT events in, after 3 s more reading

Prints one JSON object a record: {"key", "partition", "offset", "partner_id"}; with a cursor,
first {"cursor": {"partition", "partitions", "offset"}} as cursor_position decoded it.
"""
import json
import re
import sys
import textwrap
import time

from confluent_kafka import Consumer, KafkaError, TopicPartition


def snippets(doc_path):
    """The doc's Python code blocks, in order, dedented."""
    text = open(doc_path, encoding="utf-8").read()
    blocks = re.findall(r"^([ \t]*)```python\n(.*?)^[ \t]*```", text, re.S | re.M)
    return [textwrap.dedent(body) for _, body in blocks]


def replace(code, old, new):
    if old not in code:
        sys.exit(f"read_log.py: the doc's snippet no longer holds {old!r}")
    return code.replace(old, new)


def emit(msg):
    headers = dict(msg.headers() or [])
    print(json.dumps({"key": msg.key().decode(), "partition": msg.partition(), "offset": msg.offset(),
                      "partner_id": (headers.get("partner_id") or b"").decode()}), flush=True)


def read_all(bootstrap, topic):
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "hookstream-datalog-test",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "enable.partition.eof": True})
    parts = c.list_topics(topic, timeout=30).topics[topic].partitions
    c.assign([TopicPartition(topic, p, 0) for p in parts])
    at_end, deadline = set(), time.monotonic() + 120
    while len(at_end) < len(parts):
        if time.monotonic() > deadline:
            sys.exit(f"read_log.py: not at the end of {topic} after 120 s ({len(at_end)} of {len(parts)} partitions)")
        msg = c.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            if msg.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(msg.partition())
                continue
            sys.exit(f"read_log.py: {msg.error()}")
        emit(msg)
    c.close()


class Done(Exception):
    """Ends the doc's endless loop once the events the test waits for are in."""


def read_partner(doc, bootstrap, topic, partner, want, cursor=None):
    blocks = snippets(doc)
    env = {}
    exec(next(b for b in blocks if "def partition_for" in b), env)  # the doc's function, its asserts
    exec(next(b for b in blocks if "def cursor_position" in b), env)
    code = next(b for b in blocks if "from confluent_kafka import Consumer" in b)
    code = replace(code, '"127.0.0.1:19092"', repr(bootstrap))
    code = replace(code, '"hookstream.events"', repr(topic))
    code = replace(code, 'partition_for("acme", parts)', f"partition_for({partner!r}, parts)")
    code = replace(code, '== b"acme"', f"== {partner.encode()!r}")
    n = None
    if cursor:
        # The doc: start the partner's partition at the cursor's offset.
        p, n, o = env["cursor_position"](cursor)
        code = replace(code, "OFFSET_BEGINNING)]", f"{o})]")
        print(json.dumps({"cursor": {"partition": p, "partitions": n, "offset": o}}), flush=True)
    # The doc's loop as written; Consumer is this subclass, which remembers the record that
    # handle is called for, so that it can be printed with its partition and offset.
    code = replace(code, "from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING",
                   "from confluent_kafka import TopicPartition, OFFSET_BEGINNING")
    last, seen, started = [None], [0], time.monotonic()

    class Recording(Consumer):
        def poll(self, timeout=None):
            if time.monotonic() - started > 120:
                sys.exit(f"read_log.py: {seen[0]} of {want} events of {partner} after 120 s")
            msg = super().poll(timeout)
            last[0] = msg
            return msg

    def handle(key, value):
        emit(last[0])
        seen[0] += 1
        if seen[0] >= want:
            raise Done()

    env.update(Consumer=Recording, handle=handle)
    try:
        exec(code, env)
    except Done:
        pass
    if n is not None and env["parts"] != n:
        sys.exit(f"read_log.py: the cursor is of {n} partitions, the topic has {env['parts']}")
    # Then 3 s more with the same consumer: a duplicate or a stray record would show here.
    c, until = env["c"], time.monotonic() + 3
    while time.monotonic() < until:
        msg = c.poll(0.5)
        if msg is not None and not msg.error() and dict(msg.headers() or []).get("partner_id") == partner.encode():
            emit(msg)
    c.close()


def main(argv):
    if len(argv) >= 5 and argv[2] == "all":
        read_all(argv[3], argv[4])
    elif len(argv) in (7, 8) and argv[2] == "partner":
        read_partner(argv[1], argv[3], argv[4], argv[5], int(argv[6]), argv[7] if len(argv) == 8 else None)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
