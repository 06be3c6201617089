#!/usr/bin/env bash
# Local Kafka (KRaft, broker+controller in one JVM per node) for hookstream
# development and integration tests: one node, or a cluster of three. No Docker
# and no tarball download: the broker jars come from Maven Central through
# deploy/kafka/pom.xml.
#
#   kafka.sh up | down | status | cli <main-class> [args...]
#   kafka.sh cluster up | down | status | start <node> | stop <node> | pid <node> | bootstrap
#   kafka.sh secure up | down | status | bootstrap | dir | client-config
#
# Env: KAFKA_VERSION (4.4.0), KAFKA_PORT (19092; controller uses KAFKA_PORT+1),
#      KAFKA_CLUSTER_PORT (19292; node n uses +2(n-1) and its controller +2(n-1)+1),
#      KAFKA_CLUSTER_HEAP (384m), KAFKA_SECURE_PORT (19392; controller +1),
#      KAFKA_TXN_RETRY_BACKOFF_MS (1), KAFKA_HEAP_OPTS (-Xms1g -Xmx1g),
#      KAFKA_JVM_PERFORMANCE_OPTS (-XX:+UseZGC), HOOKSTREAM_DATA_DIR (<repo>/.data). See README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
KAFKA_PORT="${KAFKA_PORT:-19092}"
CONTROLLER_PORT="$((KAFKA_PORT + 1))"
DATA_ROOT="${HOOKSTREAM_DATA_DIR:-$REPO/.data}"
KDIR="$DATA_ROOT/kafka"
# KAFKA_LIBS lets a second broker (a test's private one) share the resolved jars.
LIBS="${KAFKA_LIBS:-$KDIR/libs}"
PIDFILE="$KDIR/kafka.pid"
PROPS="$KDIR/server.properties"
LOGDIR="$KDIR/logs"
BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
# The single node's heap and collector (the secured node's too), under the names Kafka's own
# scripts read: Kafka's default heap, and ZGC, whose pauses stay under a millisecond. With G1 and
# a smaller heap the broker paused for 20-25 ms every 1.5 s at a steady 1,000 events/s on a
# 2-core machine, and those pauses were the p99 of every event in flight across them
# (docs/operations.md, Kafka broker settings). A cluster node keeps G1 and KAFKA_CLUSTER_HEAP
# (three JVMs share the machine).
read -r -a HEAP <<<"${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g}"
read -r -a JVM_OPTS <<<"${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseZGC}"

# The three-node cluster: node n (1-3) is a broker and a controller of one quorum, with its
# state under $CLUSTER_DIR/node-n. Set by select_node; NODE is empty for the single node.
NODES=3
CLUSTER_PORT="${KAFKA_CLUSTER_PORT:-19292}"
CLUSTER_DIR="$DATA_ROOT/kafka-cluster"
CLUSTER_HEAP="${KAFKA_CLUSTER_HEAP:-384m}"
NODE=""
# Fixed so the formatted storage stays valid across restarts and re-creations.
CLUSTER_ID="dPh39buyTEiZcdxofnt2Xg"
READY_TIMEOUT="${KAFKA_READY_TIMEOUT:-90}"
TXN_RETRY_BACKOFF_MS="${KAFKA_TXN_RETRY_BACKOFF_MS:-1}"

# The secured node (select_secure): one KRaft node whose only client listener is SASL_SSL, with
# SCRAM users and the StandardAuthorizer, its state (certificates, passwords) under $SECURE_DIR.
SECURE=""
SECURE_PORT="${KAFKA_SECURE_PORT:-19392}"
SECURE_DIR="$DATA_ROOT/kafka-secure"
# The super user that sets up ACLs (and that the broker talks to itself as), the user that
# creates the topics, and one user per component, each given only its own ACLs
# (docs/operations.md).
SECURE_SUPER="admin"
SECURE_USERS=(admin hookstream-setup hookstream-cdc hookstream-fanout hookstream-sender hookstream-retry hookstream-recorder hookstream-admin)

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

log() { echo "kafka.sh: $*" >&2; }

# Short-lived CLI JVMs: C1 only and a small heap start noticeably faster on 2 cores.
TOOL=("$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Djava.awt.headless=true -Dlog4j2.shutdownHookEnabled=false
  -Dlog4j2.configurationFile="$HERE/tools-log4j2.xml" -cp "$LIBS/*")

# Fills $LIBS unless it already holds exactly this version built from this pom.
ensure_libs() {
  local stamp
  stamp="$KAFKA_VERSION $(sha256sum "$HERE/pom.xml" | cut -c1-16)"
  if [[ -f "$LIBS/.stamp" && "$(cat "$LIBS/.stamp")" == "$stamp" ]]; then return; fi
  log "resolving org.apache.kafka:kafka_2.13:$KAFKA_VERSION via Maven into $LIBS"
  # Wipe first: jars of two Kafka versions on one classpath break in odd ways.
  rm -rf "$LIBS"
  # Output to a file: even -q -B prints stray ANSI resets on stdout.
  mvn -q -B -f "$HERE/pom.xml" dependency:copy-dependencies \
    -Dkafka.version="$KAFKA_VERSION" -Dkafka.libs="$LIBS" >"$LOGDIR/mvn.log" 2>&1 \
    || { tail -n 40 "$LOGDIR/mvn.log" >&2; log "maven failed (full log: $LOGDIR/mvn.log)"; exit 1; }
  echo "$stamp" >"$LIBS/.stamp"
}

# select_node makes the functions below act on node $1 of the cluster.
select_node() {
  NODE="$1"
  [[ "$NODE" =~ ^[1-3]$ ]] || { log "node must be 1, 2 or 3, got '$NODE'"; exit 2; }
  KAFKA_PORT="$((CLUSTER_PORT + 2 * (NODE - 1)))"
  CONTROLLER_PORT="$((KAFKA_PORT + 1))"
  KDIR="$CLUSTER_DIR/node-$NODE"
  PIDFILE="$KDIR/kafka.pid"
  PROPS="$KDIR/server.properties"
  LOGDIR="$KDIR/logs"
  BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
  HEAP=(-Xms128m "-Xmx$CLUSTER_HEAP")
  JVM_OPTS=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20)
  mkdir -p "$KDIR" "$LOGDIR"
}

# cluster_bootstrap is every node's broker address, comma separated.
cluster_bootstrap() {
  local n out=""
  for n in $(seq 1 "$NODES"); do out+="${out:+,}127.0.0.1:$((CLUSTER_PORT + 2 * (n - 1)))"; done
  echo "$out"
}

# cluster_voters is the static controller quorum: every node's controller listener.
cluster_voters() {
  local n out=""
  for n in $(seq 1 "$NODES"); do out+="${out:+,}$n@127.0.0.1:$((CLUSTER_PORT + 2 * (n - 1) + 1))"; done
  echo "$out"
}

write_props() {
  if [[ -n "$NODE" ]]; then write_cluster_props; return; fi
  if [[ -n "$SECURE" ]]; then write_secure_props; return; fi
  cat >"$PROPS" <<EOF
# Generated by deploy/kafka/kafka.sh on every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
# Dynamic (KIP-853) single-voter quorum, formatted with 'StorageTool format --standalone'.
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KDIR/data
EOF
  single_broker_settings >>"$PROPS"
}

# single_broker_settings prints the settings of a one-node broker, plain or secure.
single_broker_settings() {
  cat <<EOF
# One broker: every internal topic must fit on it, or consumer groups and
# transactional producers hang waiting for replicas that will never exist.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
default.replication.factor=1
min.insync.replicas=1
# Fewer internal partitions = faster first group join / initTransactions on 2 cores.
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10

group.initial.rebalance.delay.ms=0
# A node restarted after a crash (SIGKILL) registers again only once the controller has let its
# previous registration's session expire, 9 s by default (DUPLICATE_BROKER_REGISTRATION until
# then). On loopback a 3 s session with 1 s heartbeats is plenty, and the restart is back sooner.
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=1000
# Tests delete their topics; free the files (and their descriptors) soon after.
log.segment.delete.delay.ms=1000
num.partitions=1
# Topics are created explicitly by hookstream; typos should fail loudly.
auto.create.topics.enable=false
EOF
  transaction_settings
}

# transaction_settings prints the transaction settings of every node here (docs/operations.md,
# Kafka broker settings). A transactional producer's first write after its previous commit (cdc
# and fanout begin one every commit interval) is refused by the coordinator until that commit's
# markers are written, and the broker retries it before answering, every 20 ms by default: on a
# freshly started broker, slow to write markers, steady runs had 0.11-0.70x the p99 at 1 ms.
transaction_settings() {
  [[ "$TXN_RETRY_BACKOFF_MS" =~ ^[0-9]+$ ]] || { log "KAFKA_TXN_RETRY_BACKOFF_MS must be a whole number of milliseconds, got '$TXN_RETRY_BACKOFF_MS'"; exit 2; }
  echo "add.partitions.to.txn.retry.backoff.ms=$TXN_RETRY_BACKOFF_MS"
}

# A node of the three-node cluster: every topic (internal ones included) on all three nodes, and
# a write acknowledged only once two of them have it, so one node may die (even by SIGKILL) with
# nothing acknowledged lost and writes going on.
write_cluster_props() {
  cat >"$PROPS" <<EOF
# Generated by deploy/kafka/kafka.sh cluster on every start; edit the script, not this file.
process.roles=broker,controller
node.id=$NODE
# A static quorum of the three controllers: any two of them elect the active controller.
controller.quorum.voters=$(cluster_voters)
controller.listener.names=CONTROLLER
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KDIR/data

offsets.topic.replication.factor=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
offsets.topic.num.partitions=10
transaction.state.log.num.partitions=10

# Three JVMs share a small machine: few threads each.
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
background.threads=2

group.initial.rebalance.delay.ms=0
log.segment.delete.delay.ms=1000
num.partitions=1
auto.create.topics.enable=false
EOF
  transaction_settings >>"$PROPS"
}

# select_secure makes the functions below act on the secured node.
select_secure() {
  SECURE=1
  KAFKA_PORT="$SECURE_PORT"
  CONTROLLER_PORT="$((KAFKA_PORT + 1))"
  KDIR="$SECURE_DIR"
  PIDFILE="$KDIR/kafka.pid"
  PROPS="$KDIR/server.properties"
  LOGDIR="$KDIR/logs"
  BOOTSTRAP="127.0.0.1:$KAFKA_PORT"
  mkdir -p "$KDIR" "$LOGDIR"
}

# secure_password prints the password of user $1, made (random) on first use and kept in
# users/<user>.password (0600): what a component's HOOKSTREAM_KAFKA_SASL_PASSWORD_FILE names.
secure_password() {
  local f="$SECURE_DIR/users/$1.password"
  if [[ ! -s "$f" ]]; then
    mkdir -p "$SECURE_DIR/users"
    (umask 077 && head -c 24 /dev/urandom | base64 | tr -d '/+=\n' >"$f")
  fi
  cat "$f"
}

# secure_tls makes, once, a CA and the broker's certificate (for 127.0.0.1 and localhost) signed
# by it, as PEM files under tls/: ca.pem is what clients trust (HOOKSTREAM_KAFKA_TLS_CA_FILE).
secure_tls() {
  local d="$SECURE_DIR/tls"
  [[ -s "$d/broker-keystore.pem" ]] && return
  mkdir -p "$d"
  (
    umask 077
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=hookstream local test CA" \
      -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$d/broker.key" -out "$d/broker.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n' >"$d/broker.ext"
    openssl x509 -req -in "$d/broker.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial -days 3650 \
      -extfile "$d/broker.ext" -out "$d/broker.pem" 2>/dev/null
    # Kafka's PEM keystore: the (unencrypted PKCS#8) key, then the certificate chain.
    cat "$d/broker.key" "$d/broker.pem" "$d/ca.pem" >"$d/broker-keystore.pem"
  ) || { log "openssl failed to make the certificates in $d"; exit 1; }
  chmod 644 "$d/ca.pem"
}

# secure_client_config prints the properties of a Kafka CLI tool connecting as the super user.
secure_client_config() {
  cat <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SECURE_SUPER" password="$(secure_password "$SECURE_SUPER")";
ssl.truststore.type=PEM
ssl.truststore.location=$SECURE_DIR/tls/ca.pem
EOF
}

write_secure_props() {
  (umask 077 && cat >"$PROPS" <<EOF
# Generated by deploy/kafka/kafka.sh secure on every start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
# Clients and the broker itself (transaction markers) over SASL_SSL; the controller listener is
# plaintext on loopback, and its anonymous principal (the broker registering) a super user.
listeners=SASL_SSL://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=SASL_SSL://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SECURE_SUPER" password="$(secure_password "$SECURE_SUPER")";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
ssl.keystore.type=PEM
ssl.keystore.location=$SECURE_DIR/tls/broker-keystore.pem
ssl.truststore.type=PEM
ssl.truststore.location=$SECURE_DIR/tls/ca.pem
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:$SECURE_SUPER;User:ANONYMOUS
log.dirs=$KDIR/data
EOF
  single_broker_settings >>"$PROPS"
  )
}

# Like kill -0, but a not-yet-reaped zombie counts as dead.
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ "${stat##*) }" != Z* ]]
}

# Pid from the pid file if it is a live Kafka broker (guards against pid reuse).
live_pid() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka' || return 1
  echo "$pid"
}

# A real Kafka round-trip (Metadata via Admin.listTopics), not just an open port.
answers() {
  (exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_PORT") 2>/dev/null || return 1
  local cfg="$KDIR/probe.properties"
  # Bound each attempt; Admin's default would keep retrying for 60s.
  printf 'request.timeout.ms=5000\ndefault.api.timeout.ms=8000\n' >"$cfg"
  if [[ -n "$SECURE" ]]; then (umask 077 && secure_client_config >>"$cfg"); fi
  timeout 30 "${TOOL[@]}" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" \
    --command-config "$cfg" --list >/dev/null 2>"$LOGDIR/probe.err"
}

fail_with_log() {
  log "$1"
  for f in "$LOGDIR/server.log" "$LOGDIR/stdout.log"; do
    [[ -s "$f" ]] && { echo "----- tail of $f" >&2; tail -n 40 "$f" >&2; }
  done
  exit 1
}

wait_ready() {
  local pid="$1" deadline=$((SECONDS + READY_TIMEOUT))
  while true; do
    alive "$pid" || fail_with_log "broker (pid $pid) exited during startup"
    answers && alive "$pid" && return
    ((SECONDS < deadline)) || fail_with_log "broker did not answer on $BOOTSTRAP within ${READY_TIMEOUT}s"
    sleep 1
  done
}

cmd_up() {
  local pid
  if pid="$(live_pid)"; then
    # Maybe a concurrent/just-finished start: give it the normal startup window.
    wait_ready "$pid"
    echo "kafka already running (pid $pid, $BOOTSTRAP)"
    return
  fi
  if [[ -f "$PIDFILE" ]]; then log "removing stale pid file"; rm -f "$PIDFILE"; fi
  check_ports
  ensure_libs
  launch
  wait_ready "$pid"
  echo "kafka up (pid $pid, $BOOTSTRAP)"
}

# check_ports fails when the node's ports are taken: otherwise the readiness probe could be
# answered by someone else's broker.
check_ports() {
  local port
  for port in "$KAFKA_PORT" "$CONTROLLER_PORT"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      log "port $port is already in use by another process (another broker with a different HOOKSTREAM_DATA_DIR?)"
      exit 1
    fi
  done
}

# launch formats the node's storage the first time and starts its JVM in the background,
# setting pid; it does not wait for it to answer.
launch() {
  mkdir -p "$KDIR/data"
  write_props
  if [[ ! -f "$KDIR/data/meta.properties" ]]; then
    log "formatting storage in $KDIR/data (cluster id $CLUSTER_ID)"
    # The single node is a dynamic quorum of itself; cluster nodes name their voters statically.
    local quorum=(--standalone) scram=() u
    [[ -n "$NODE" ]] && quorum=()
    # The secured node's SCRAM users exist from the start: the broker authenticates to itself.
    if [[ -n "$SECURE" ]]; then
      for u in "${SECURE_USERS[@]}"; do
        scram+=(--add-scram "SCRAM-SHA-512=[name=$u,password=$(secure_password "$u")]"
          --add-scram "SCRAM-SHA-256=[name=$u,password=$(secure_password "$u")]")
      done
    fi
    "${TOOL[@]}" kafka.tools.StorageTool format "${quorum[@]}" "${scram[@]}" --config "$PROPS" \
      --cluster-id "$CLUSTER_ID" >"$LOGDIR/format.log" 2>&1 \
      || { cat "$LOGDIR/format.log" >&2; exit 1; }
  fi

  # setsid: own session, so the broker outlives the shell/make that started it.
  # The inner bash records its own pid and then execs java, so the pid is the JVM's.
  # 9>&- : don't let the broker inherit (and hold forever) our flock descriptor.
  # shellcheck disable=SC2016 # $$ and $@ are for the inner bash
  setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$PIDFILE" \
    "$JAVA" "${HEAP[@]}" "${JVM_OPTS[@]}" -Xlog:gc:file="$LOGDIR/gc.log":time,uptime:filecount=2,filesize=10m \
    -Djava.awt.headless=true \
    -Dkafka.logs.dir="$LOGDIR" -Dlog4j2.configurationFile="$HERE/log4j2.xml" \
    -cp "$LIBS/*" kafka.Kafka "$PROPS" \
    </dev/null >>"$LOGDIR/stdout.log" 2>&1 9>&- &
  for _ in 1 2 3 4 5 6 7 8 9 10; do [[ -s "$PIDFILE" ]] && break; sleep 0.2; done
  pid="$(cat "$PIDFILE")"
  log "started broker pid $pid, waiting for $BOOTSTRAP (logs: $LOGDIR)"
}

cmd_down() {
  local pid
  if ! pid="$(live_pid)"; then
    rm -f "$PIDFILE"
    echo "kafka not running"
    return
  fi
  kill -TERM "$pid"
  # Controlled shutdown flushes logs and the metadata snapshot; give it time.
  for _ in $(seq 1 60); do alive "$pid" || break; sleep 0.5; done
  if alive "$pid"; then
    log "broker pid $pid ignored SIGTERM for 30s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.2; done
  fi
  rm -f "$PIDFILE"
  echo "kafka stopped (pid $pid)"
}

cmd_status() {
  local pid
  if pid="$(live_pid)"; then
    if answers; then echo "kafka running (pid $pid, $BOOTSTRAP)"
    else echo "kafka running (pid $pid) but not answering on $BOOTSTRAP"; fi
  else
    echo "kafka not running"
  fi
}

# cluster_up starts every node that is not running, all before waiting for any: a node answers
# only once two controllers form the quorum.
cluster_up() {
  local n pid pids=()
  ensure_libs
  for n in $(seq 1 "$NODES"); do
    select_node "$n"
    if ! pid="$(live_pid)"; then
      rm -f "$PIDFILE"
      check_ports
      launch
    fi
    pids+=("$pid")
  done
  for n in $(seq 1 "$NODES"); do
    select_node "$n"
    wait_ready "${pids[$((n - 1))]}"
  done
  echo "kafka cluster up (nodes 1-$NODES, bootstrap $(cluster_bootstrap), replication factor 3, min.insync.replicas 2)"
}

# cluster_down stops every node at once, SIGKILL after 10 s: a node whose controlled shutdown
# waits for a controller quorum that is gone (the other nodes stopping too) would wait for good,
# and a killed node recovers its logs at its next start.
cluster_down() {
  local n pid pids=()
  for n in $(seq 1 "$NODES"); do
    select_node "$n"
    if pid="$(live_pid)"; then kill -TERM "$pid"; pids+=("$pid"); fi
    rm -f "$PIDFILE"
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 20); do alive "$pid" || break; sleep 0.5; done
    if alive "$pid"; then
      log "broker pid $pid still stopping after 10s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      while alive "$pid"; do sleep 0.2; done
    fi
  done
  echo "kafka cluster stopped (${#pids[@]} nodes were running)"
}

# cluster_start starts one node (e.g. after a kill) and waits until it answers.
cluster_start() {
  local pid
  select_node "$1"
  if pid="$(live_pid)"; then
    echo "kafka node $NODE already running (pid $pid, $BOOTSTRAP)"
    return
  fi
  rm -f "$PIDFILE"
  check_ports
  ensure_libs
  launch
  wait_ready "$pid"
  echo "kafka node $NODE up (pid $pid, $BOOTSTRAP)"
}

cluster() {
  mkdir -p "$CLUSTER_DIR"
  local action="${1:-}"
  case "$action" in
    up | down | start | stop)
      exec 9>"$CLUSTER_DIR/.lock"
      flock 9
      ;;
  esac
  case "$action" in
    up) cluster_up ;;
    down) cluster_down ;;
    start) cluster_start "${2:-}" ;;
    stop) select_node "${2:-}"; cmd_down ;;
    pid) select_node "${2:-}"; live_pid || { echo "kafka node $NODE not running" >&2; exit 1; } ;;
    bootstrap) cluster_bootstrap ;;
    status)
      local n
      for n in $(seq 1 "$NODES"); do
        select_node "$n"
        echo "node $n: $(cmd_status)"
      done
      ;;
    *)
      echo "usage: $0 cluster up|down|status|start <node>|stop <node>|pid <node>|bootstrap" >&2
      exit 2
      ;;
  esac
}

# secure runs the secured node's actions.
secure() {
  select_secure
  local action="${1:-}"
  case "$action" in
    up | down)
      exec 9>"$KDIR/.lock"
      flock 9
      ;;
  esac
  case "$action" in
    up) secure_tls; cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    bootstrap) echo "$BOOTSTRAP" ;;
    dir) echo "$SECURE_DIR" ;;
    client-config) secure_tls; secure_client_config ;;
    *)
      echo "usage: $0 secure up|down|status|bootstrap|dir|client-config" >&2
      exit 2
      ;;
  esac
}

mkdir -p "$KDIR" "$LOGDIR"
case "${1:-}" in
  up | down)
    # Serialize up/down (e.g. parallel make targets) on one data dir.
    exec 9>"$KDIR/.lock"
    flock 9
    "cmd_$1"
    ;;
  status) cmd_status ;;
  cluster)
    shift
    cluster "$@"
    ;;
  secure)
    shift
    secure "$@"
    ;;
  cli)
    # e.g. kafka.sh cli org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
    shift
    ensure_libs
    exec "${TOOL[@]}" "$@"
    ;;
  *)
    echo "usage: $0 up|down|status|cli <main-class> [args...] | cluster up|down|status|start <node>|stop <node>|pid <node>|bootstrap | secure up|down|status|bootstrap|dir|client-config" >&2
    exit 2
    ;;
esac
