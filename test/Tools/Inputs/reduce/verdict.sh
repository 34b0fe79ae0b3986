#!/usr/bin/env bash
# A stand-in verdict for test/fuzz/reduce.py: the program in DIR "fails" with
# "uses log_softmax" while foldc accepts it and it calls log_softmax.
# usage: verdict.sh FOLDC DIR
foldc=$1 dir=$2
"$foldc" --emit=cpp "$dir/prog.fold" > /dev/null 2>&1 || exit 0
grep -q "log_softmax" "$dir/prog.fold" || exit 0
echo "uses log_softmax"
exit 1
