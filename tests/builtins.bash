# tests/builtins.bash: the suite's BASH_ENV (scripts/test.sh, scripts/mutants.sh), so every
# bash script the suite runs starts with sleep as a builtin (Debian's bash-builtins). The
# scripts poll: a clean clone's run forked /bin/sleep 21,855 times, and a fork and exec
# costs about 10 ms of CPU on these VMs (100 `sleep 0.001`: 1.0 CPU-s as a program,
# 0.015 as the builtin). Its intervals are the same numbers; it knows no `infinity`.
# Only sleep: the loadable seq counts down where GNU seq prints nothing.
enable -f /usr/lib/bash/sleep sleep
