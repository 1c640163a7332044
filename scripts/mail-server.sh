#!/usr/bin/env bash
# mail-server.sh — a private, loopback-only Postfix + Dovecot for the email tool tests.
#
#   SMTP   127.0.0.1:2525  Postfix, plain (no STARTTLS), AUTH optional
#   SMTPS  127.0.0.1:1465  Postfix, implicit TLS (self-signed, CA in $MAILTEST_DIR/etc/tls/cert.pem)
#   IMAP   127.0.0.1:1143  Dovecot, plain (no STARTTLS)
#   IMAPS  127.0.0.1:1993  a second Dovecot serving only implicit TLS (same users and Maildirs)
#   Postfix → Dovecot LMTP (unix socket) → Maildir under $MAILTEST_DIR/mail.
#
# Only mail for the test users is accepted; every other recipient is refused at RCPT time and the
# default/relay transports are `error:`, so nothing can leave the machine.
#
# Usage (as root): scripts/mail-server.sh start|stop|restart|status|purge|reset|env
#   start    install the Debian packages if missing, write the config, start the daemons and return
#            once a real IMAP LOGIN works (idempotent: a no-op when the same config already runs)
#   stop     stop only the daemons this script started (by pid file + executable check)
#   restart  stop, then start (mail is kept)
#   status   exit 0 when everything runs, 3 otherwise
#   purge    empty every mailbox and the Postfix queue while running (fast, between test runs)
#   reset    stop and delete $MAILTEST_DIR
#   env      print the `export MAILTEST_…` lines of these settings (also in $MAILTEST_DIR/env once
#            started); needs no root and starts nothing
#
# Settings: MAILTEST_DIR (default /var/tmp/mailtest-<8 hex of this checkout's path>), MAILTEST_USERS
# ("agent@example.test:agent-pass user@example.test:user-pass"), MAILTEST_SMTP_PORT,
# MAILTEST_SMTPS_PORT, MAILTEST_IMAP_PORT, MAILTEST_IMAPS_PORT (default: four consecutive ports
# B..B+3, B between 10000 and 31990 chosen from the same hash, so two checkouts on one machine
# each get their own server; once $MAILTEST_DIR/env exists its ports are kept),
# MAILTEST_MESSAGE_SIZE_LIMIT (bytes, 1048576: small on purpose so the oversized-message test is
# cheap), MAILTEST_NO_INSTALL=1 (never apt-get). MAILTEST_DIR may be anywhere world-traversable.
#
# stdout carries only the export lines, so `eval "$(bash scripts/mail-server.sh start)"` works; logs
# go to stderr and to $MAILTEST_DIR/log/.
set -euo pipefail

# Per checkout: the folder and ports follow from a hash of this checkout's real path.
CHECKOUT=$(cd "$(dirname "$0")/.." && pwd -P)
CHECKOUT_HASH=$(printf '%s' "$CHECKOUT" | sha256sum | cut -c1-8)
D=${MAILTEST_DIR:-/var/tmp/mailtest-$CHECKOUT_HASH}
# A server already configured in $D keeps its ports (the variables still win).
saved_port() { sed -n "s/^export $1=\([0-9][0-9]*\)\$/\1/p" "$D/env" 2>/dev/null | head -n1 || true; }
BASE_PORT=$((10000 + (16#$CHECKOUT_HASH % 2200) * 10))
USERS=${MAILTEST_USERS:-"agent@example.test:agent-pass user@example.test:user-pass"}
MAILHOST=mail.example.test
SMTP_PORT=${MAILTEST_SMTP_PORT:-$(saved_port MAILTEST_SMTP_PORT)}
SMTPS_PORT=${MAILTEST_SMTPS_PORT:-$(saved_port MAILTEST_SMTPS_PORT)}
IMAP_PORT=${MAILTEST_IMAP_PORT:-$(saved_port MAILTEST_IMAP_PORT)}
IMAPS_PORT=${MAILTEST_IMAPS_PORT:-$(saved_port MAILTEST_IMAPS_PORT)}
SMTP_PORT=${SMTP_PORT:-$BASE_PORT}
SMTPS_PORT=${SMTPS_PORT:-$((BASE_PORT + 1))}
IMAP_PORT=${IMAP_PORT:-$((BASE_PORT + 2))}
IMAPS_PORT=${IMAPS_PORT:-$((BASE_PORT + 3))}
SIZE_LIMIT=${MAILTEST_MESSAGE_SIZE_LIMIT:-1048576}
VMAIL=mailtest
PACKAGES=(postfix dovecot-core dovecot-imapd dovecot-lmtpd openssl)
MARKER=.durable-agent-mailtest

log() { printf '[mail-server] %s\n' "$*" >&2; }
die() {
  log "ERROR: $*"
  exit 1
}

case "$D" in
  /*[[:space:]]* | *[[:space:]]*) die "MAILTEST_DIR must not contain whitespace" ;;
  / | "") die "MAILTEST_DIR must not be /" ;;
  /*) ;;
  *) die "MAILTEST_DIR must be an absolute path" ;;
esac

# ------------------------------------------------------------------------------------------ pids
# A pid file counts only when its process still runs the expected binary: after a crash the pid may
# have been reused by something unrelated, which we must never signal.
pid_of() {
  local file=$1 exe=$2 pid
  [ -r "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$exe" ] || return 1
  echo "$pid"
}
postfix_pid() { pid_of "$D/spool/pid/master.pid" /usr/lib/postfix/sbin/master; }
dovecot_pid() { pid_of "$D/run/dovecot/master.pid" /usr/sbin/dovecot; }
dovecot_tls_pid() { pid_of "$D/run/dovecot-tls/master.pid" /usr/sbin/dovecot; }

all_running() { postfix_pid >/dev/null && dovecot_pid >/dev/null && dovecot_tls_pid >/dev/null; }

# Daemons keep every descriptor they inherit: started from `$(…)`, a pipe or a CI step, they would
# hold its stdout open and the caller would wait for EOF forever. Detach all of them.
detached() {
  local logfile=$1 fd
  shift
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ] 2>/dev/null; then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec "$@" </dev/null >>"$logfile" 2>&1
  )
}

do_stop() {
  local pids=() p i alive
  for p in "$(postfix_pid || true)" "$(dovecot_pid || true)" "$(dovecot_tls_pid || true)"; do
    [ -n "$p" ] && pids+=("$p")
  done
  [ ${#pids[@]} = 0 ] && return 0
  # All at once: Dovecot alone takes 2–3 s to exit.
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for i in $(seq 100); do
    alive=0
    for p in "${pids[@]}"; do [ -d "/proc/$p" ] && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do
    if [ -d "/proc/$p" ]; then
      log "pid $p ignored SIGTERM for 10 s; sending SIGKILL"
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  log "stopped (pids ${pids[*]})"
}

# ------------------------------------------------------------------------------------------ install
missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed || echo "$p"
  done
}

install_packages() {
  local missing own_policy=0 rc=0 apt=(apt-get -o DPkg::Lock::Timeout=120 -o Acquire::Retries=3)
  missing=$(missing_packages | xargs)
  [ -z "$missing" ] && return 0
  [ "${MAILTEST_NO_INSTALL:-0}" = 1 ] && die "missing packages: $missing (MAILTEST_NO_INSTALL=1)"
  log "installing $missing (apt-get; log in /tmp/mailtest-apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  # No /etc/postfix/main.cf and no questions: the private instance below has its own config.
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
  # Without systemd, invoke-rc.d runs /etc/init.d/* during the install and the system-wide Dovecot
  # would grab ports 143/993. policy-rc.d exit 101 forbids that; an existing one is left alone.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  # Docker-style images ship empty package lists, so update first.
  { "${apt[@]}" update -qq && "${apt[@]}" install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold $missing; } \
    >/tmp/mailtest-apt.log 2>&1 || rc=$?
  if [ $own_policy = 1 ]; then
    rm -f /usr/sbin/policy-rc.d
    trap - EXIT
  fi
  if [ $rc != 0 ]; then
    tail -n 20 /tmp/mailtest-apt.log >&2
    die "apt-get failed (exit $rc)"
  fi
  missing=$(missing_packages | xargs)
  [ -z "$missing" ] || die "still missing after apt-get: $missing"
}

# ------------------------------------------------------------------------------------------ config
# Writes stdin to FILE only when it differs, so an unchanged config keeps its hash and a second
# `start` is a no-op.
put() {
  local file=$1 mode=$2 tmp
  tmp=$(mktemp "$file.XXXX")
  cat >"$tmp"
  chmod "$mode" "$tmp"
  if cmp -s "$tmp" "$file" 2>/dev/null; then rm -f "$tmp"; else mv -f "$tmp" "$file"; fi
}

write_config() {
  local u addr pass domains="" users="" recipients="" dir uid compat
  case "$(dovecot --version 2>/dev/null)" in
    2.3.*) ;;
    *) die "this config is for Dovecot 2.3 (Debian 12); found '$(dovecot --version 2>/dev/null)'" ;;
  esac
  case "$(postconf -d -h mail_version)" in 2.* | 3.[0-5].*) compat=2 ;; *) compat=3.6 ;; esac
  # Postfix and the mail user must be able to reach sockets and Maildirs under $D.
  dir=$(dirname "$D")
  while [ "$dir" != / ]; do
    if [ -e "$dir" ] && [ $((0$(stat -c %a "$dir") & 1)) = 0 ]; then
      die "$dir is not world-traversable; choose another MAILTEST_DIR"
    fi
    dir=$(dirname "$dir")
  done

  getent group $VMAIL >/dev/null || groupadd --system $VMAIL
  getent passwd $VMAIL >/dev/null ||
    useradd --system --gid $VMAIL --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin $VMAIL
  uid=$(id -u $VMAIL)

  install -d -m 755 "$D" "$D/etc" "$D/postfix" "$D/spool" "$D/log" "$D/run" "$D/state"
  install -d -m 700 "$D/etc/tls"
  install -d -m 700 -o postfix -g postfix "$D/data"
  install -d -m 770 -o $VMAIL -g $VMAIL "$D/mail"
  touch "$D/$MARKER"

  if [ ! -s "$D/etc/tls/cert.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 -subj "/CN=$MAILHOST" \
      -addext "subjectAltName=DNS:$MAILHOST,DNS:localhost,IP:127.0.0.1" \
      -keyout "$D/etc/tls/key.pem" -out "$D/etc/tls/cert.pem" >/dev/null 2>&1 || die "openssl failed"
    chmod 600 "$D/etc/tls/key.pem"
    chmod 644 "$D/etc/tls/cert.pem"
  fi

  # Debian's dovecot-core ships DH parameters; without them Dovecot 2.3 warns on every TLS login.
  local ssl_dh=""
  [ -r /usr/share/dovecot/dh.pem ] && ssl_dh="ssl_dh = </usr/share/dovecot/dh.pem"

  for u in $USERS; do
    addr=$(printf '%s' "${u%%:*}" | tr 'A-Z' 'a-z')
    pass=${u#*:}
    [[ "$u" == *:* && -n "$pass" && "$addr" == *@*.* ]] || die "MAILTEST_USERS entry '$u' is not addr@domain:password"
    [[ "$addr$pass" =~ ^[A-Za-z0-9._%+=@-]+$ ]] || die "MAILTEST_USERS entry '$u': only A-Z a-z 0-9 . _ % + = @ -"
    users+="$addr:{PLAIN}$pass::::::"$'\n'
    recipients+="$addr OK"$'\n'
    [[ " $domains " == *" ${addr#*@} "* ]] || domains="${domains:+$domains }${addr#*@}"
  done
  [ -n "$domains" ] || die "MAILTEST_USERS is empty"
  # Plain-text passwords: test data only.
  printf '%s' "$users" | put "$D/etc/users" 640
  chgrp dovecot "$D/etc/users"
  printf '%s' "$recipients" | put "$D/etc/recipients" 644

  put "$D/etc/dovecot-common.conf" 644 <<EOF
# generated by scripts/mail-server.sh
listen = 127.0.0.1
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_username_format = %Lu
first_valid_uid = $uid
mail_location = maildir:~/Maildir
ssl_cert = <$D/etc/tls/cert.pem
ssl_key = <$D/etc/tls/key.pem
$ssl_dh
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%Lu $D/etc/users
}
userdb {
  driver = passwd-file
  args = username_format=%Lu $D/etc/users
  default_fields = uid=$VMAIL gid=$VMAIL home=$D/mail/%d/%n
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    auto = subscribe
    special_use = \Sent
  }
  mailbox Drafts {
    auto = subscribe
    special_use = \Drafts
  }
  mailbox Trash {
    auto = subscribe
    special_use = \Trash
  }
}
protocol imap {
  mail_max_userip_connections = 200
}
# Wrong-password tests must not slow down later logins from 127.0.0.1 (shared by Postfix SASL):
# no failure delay and no growing per-IP auth penalty.
auth_failure_delay = 0
service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
EOF

  # Dovecot 2.3 offers STARTTLS on every plain listener once ssl != no, and clients then upgrade and
  # fail on the self-signed certificate; a per-IP `local` block cannot tell 1143 from 1993. Hence
  # instance 1 has ssl = no (plain IMAP + LMTP + SASL) and instance 2 serves only IMAPS.
  put "$D/etc/dovecot.conf" 644 <<EOF
# generated by scripts/mail-server.sh
!include $D/etc/dovecot-common.conf
instance_name = durable-agent-mailtest
base_dir = $D/run/dovecot
state_dir = $D/state/dovecot
log_path = $D/log/dovecot.log
protocols = imap lmtp
ssl = no
service imap-login {
  inet_listener imap {
    port = $IMAP_PORT
  }
  inet_listener imaps {
    port = 0
  }
}
service lmtp {
  unix_listener lmtp {
    mode = 0660
    user = postfix
    group = postfix
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0660
    user = postfix
    group = postfix
  }
}
protocol lmtp {
  postmaster_address = postmaster@${domains%% *}
}
EOF

  put "$D/etc/dovecot-tls.conf" 644 <<EOF
# generated by scripts/mail-server.sh
!include $D/etc/dovecot-common.conf
instance_name = durable-agent-mailtest-tls
base_dir = $D/run/dovecot-tls
state_dir = $D/state/dovecot-tls
log_path = $D/log/dovecot-tls.log
protocols = imap
ssl = required
service imap-login {
  inet_listener imap {
    port = 0
  }
  inet_listener imaps {
    port = $IMAPS_PORT
    ssl = yes
  }
}
EOF

  # A private Postfix instance (own config, queue and data dirs); /etc/postfix is never touched.
  # chroot = n everywhere (no init script prepares a chroot), logs via postlogd (no syslog).
  put "$D/postfix/main.cf" 644 <<EOF
# generated by scripts/mail-server.sh
compatibility_level = $compat
queue_directory = $D/spool
data_directory = $D/data
maillog_file = $D/log/postfix.log
# Postfix writes its log only under these prefixes (default /var, /dev/stdout): allow $D/log too.
maillog_file_prefixes = /var, /dev/stdout, $D/log
myhostname = $MAILHOST
mydomain = ${domains%% *}
myorigin = \$myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
relayhost =
smtpd_banner = \$myhostname ESMTP durable-agent-mailtest
biff = no
append_dot_mydomain = no
message_size_limit = $SIZE_LIMIT
alias_maps =
alias_database =
local_recipient_maps =
local_transport = error:local delivery is disabled (mailtest)
default_transport = error:outbound mail is disabled (mailtest)
relay_transport = error:outbound mail is disabled (mailtest)
virtual_mailbox_domains = $domains
virtual_mailbox_maps = texthash:$D/etc/recipients
virtual_transport = lmtp:unix:$D/run/dovecot/lmtp
smtpd_relay_restrictions = reject_unauth_destination
smtpd_sasl_auth_enable = yes
smtpd_sasl_type = dovecot
smtpd_sasl_path = $D/run/dovecot/auth-postfix
smtpd_sasl_security_options = noanonymous
smtpd_tls_auth_only = no
smtpd_tls_security_level = none
smtpd_tls_cert_file = $D/etc/tls/cert.pem
smtpd_tls_key_file = $D/etc/tls/key.pem
queue_run_delay = 5s
minimal_backoff_time = 5s
maximal_backoff_time = 30s
EOF

  put "$D/postfix/master.cf" 644 <<EOF
# generated by scripts/mail-server.sh
127.0.0.1:$SMTP_PORT inet n - n - - smtpd
  -o syslog_name=postfix/smtp-plain
127.0.0.1:$SMTPS_PORT inet n - n - - smtpd
  -o syslog_name=postfix/smtps
  -o smtpd_tls_wrappermode=yes
  -o smtpd_tls_security_level=encrypt
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
EOF

  env_lines | put "$D/env" 644
}

env_lines() {
  cat <<EOF
export MAILTEST_DIR=$D
export MAILTEST_HOST=127.0.0.1
export MAILTEST_SMTP_PORT=$SMTP_PORT
export MAILTEST_SMTPS_PORT=$SMTPS_PORT
export MAILTEST_IMAP_PORT=$IMAP_PORT
export MAILTEST_IMAPS_PORT=$IMAPS_PORT
export MAILTEST_CA_FILE=$D/etc/tls/cert.pem
export MAILTEST_MESSAGE_SIZE_LIMIT=$SIZE_LIMIT
export MAILTEST_USERS='$USERS'
EOF
}

config_hash() {
  cat "$D/postfix/main.cf" "$D/postfix/master.cf" "$D/etc/"dovecot*.conf "$D/etc/users" \
    "$D/etc/recipients" "$D/etc/tls/cert.pem" | sha256sum | cut -d' ' -f1
}

# ------------------------------------------------------------------------------------------ readiness
# IMAP over bash /dev/tcp on fd 3: sends "TAG COMMAND", succeeds on "TAG OK".
imap_cmd() {
  local line
  printf '%s %s\r\n' "$1" "$2" >&3
  while IFS= read -r -t 10 line <&3; do
    line=${line%$'\r'}
    case "$line" in "$1 OK"*) return 0 ;; "$1 "*) return 1 ;; esac
  done
  return 1
}

# A greeting is not readiness: Dovecot greets before its auth process can answer. Only a real LOGIN
# (plain and TLS) counts; the SMTP ports must greet with 220.
ready() {
  local first=${USERS%% *} addr pass line
  addr=${first%%:*}
  pass=${first#*:}
  {
    exec 3<>"/dev/tcp/127.0.0.1/$IMAP_PORT" && IFS= read -r -t 5 line <&3 &&
      imap_cmd a "LOGIN \"$addr\" \"$pass\"" && imap_cmd b LOGOUT
  } 2>/dev/null || { exec 3>&- 2>/dev/null; return 1; }
  exec 3>&-
  printf 'a LOGIN "%s" "%s"\r\nb LOGOUT\r\n' "$addr" "$pass" |
    timeout 10 openssl s_client -quiet -connect "127.0.0.1:$IMAPS_PORT" 2>/dev/null | tr -d '\r' |
    grep -q '^a OK' || return 1
  timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$SMTP_PORT && IFS= read -r l <&3 && [[ \$l == 220* ]]" 2>/dev/null ||
    return 1
  printf 'QUIT\r\n' | timeout 10 openssl s_client -quiet -connect "127.0.0.1:$SMTPS_PORT" 2>/dev/null |
    head -n1 | grep -q '^220'
}

wait_ready() {
  local i
  for i in $(seq 100); do
    ready && return 0
    sleep 0.2
  done
  die "the mail system did not become ready in 20 s; see $D/log/"
}

port_busy() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# ------------------------------------------------------------------------------------------ commands
do_start() {
  local t0=$SECONDS hash p i
  [ "$(id -u)" = 0 ] || die "run as root (it installs packages and starts daemons as their users)"
  install_packages
  write_config
  hash=$(config_hash)
  if all_running && [ "$(cat "$D/run/config.sha256" 2>/dev/null)" = "$hash" ]; then
    wait_ready
    log "already running"
    cat "$D/env"
    return 0
  fi
  do_stop
  for p in "$SMTP_PORT" "$SMTPS_PORT" "$IMAP_PORT" "$IMAPS_PORT"; do
    port_busy "$p" && die "127.0.0.1:$p is used by another process; set MAILTEST_*_PORT"
  done
  # Stale sockets from a killed run make Dovecot's auth retry for 5 s, and a stale master.pid makes
  # it claim it is already running.
  rm -rf "$D/run/dovecot" "$D/run/dovecot-tls" "$D/run/config.sha256"
  detached "$D/log/start.log" dovecot -c "$D/etc/dovecot.conf" || die "dovecot failed; see $D/log/"
  detached "$D/log/start.log" dovecot -c "$D/etc/dovecot-tls.conf" || die "dovecot (TLS) failed; see $D/log/"
  # Postfix needs Dovecot's LMTP and SASL sockets.
  for i in $(seq 50); do
    [ -S "$D/run/dovecot/lmtp" ] && [ -S "$D/run/dovecot/auth-postfix" ] && break
    sleep 0.1
  done
  detached "$D/log/start.log" postfix -c "$D/postfix" start || die "postfix failed; see $D/log/"
  wait_ready
  echo "$hash" >"$D/run/config.sha256"
  log "mail system ready in $((SECONDS - t0)) s: smtp :$SMTP_PORT smtps :$SMTPS_PORT imap :$IMAP_PORT imaps :$IMAPS_PORT"
  cat "$D/env"
}

do_status() {
  local rc=0 p
  if p=$(postfix_pid); then echo "postfix      running (pid $p) smtp 127.0.0.1:$SMTP_PORT smtps :$SMTPS_PORT"; else echo "postfix      stopped"; rc=3; fi
  if p=$(dovecot_pid); then echo "dovecot      running (pid $p) imap 127.0.0.1:$IMAP_PORT"; else echo "dovecot      stopped"; rc=3; fi
  if p=$(dovecot_tls_pid); then echo "dovecot-tls  running (pid $p) imaps 127.0.0.1:$IMAPS_PORT"; else echo "dovecot-tls  stopped"; rc=3; fi
  echo "data         $D"
  return $rc
}

do_purge() {
  dovecot_pid >/dev/null || die "not running; run: bash scripts/mail-server.sh start"
  postsuper -c "$D/postfix" -d ALL >/dev/null 2>&1 || true
  doveadm -c "$D/etc/dovecot.conf" expunge -A mailbox '*' all
  log "all mailboxes emptied"
}

do_reset() {
  do_stop
  [ -e "$D" ] || return 0
  [ -e "$D/$MARKER" ] || die "$D was not created by this script ($MARKER missing); not deleting it"
  rm -rf "$D"
  log "removed $D"
}

case "${1:-start}" in
  start) do_start ;;
  stop) do_stop ;;
  restart)
    do_stop
    do_start
    ;;
  status) do_status ;;
  purge) do_purge ;;
  reset) do_reset ;;
  env) env_lines ;;
  *)
    echo "usage: $0 start|stop|restart|status|purge|reset|env" >&2
    exit 2
    ;;
esac
