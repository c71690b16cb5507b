# Stage 2 (the host's bash on the overlay root): run cmd.sh with its output
# on ttyS1, its exit code into /run/vmwork/rc, then power off.
export PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
OUT=/dev/ttyS1; stty -F $OUT raw -echo 2>/dev/null || OUT=/dev/console
cd /run/vmwork
bash /run/vmwork/cmd.sh </dev/null >$OUT 2>&1
echo $? > /run/vmwork/rc
sync; echo o > /proc/sysrq-trigger
# bash builtins only: the root filesystem goes away as the VM powers off
while :; do read -r -t 10 _ </dev/ptmx 2>/dev/null; done
