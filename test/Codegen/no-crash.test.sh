#!/usr/bin/env bash
# usage: no-crash.test.sh FOLDC DIR... ; fails naming each file foldc crashed on.
foldc=$1
shift
status=0
count=0
while IFS= read -r file; do
  count=$((count + 1))
  "$foldc" --emit=cpp "$file" -I "$(dirname "$file")/Inputs" > /dev/null 2>&1
  code=$?
  if [ "$code" -gt 1 ]; then
    echo "foldc --emit=cpp $file: exit status $code" >&2
    status=1
  fi
done < <(find "$@" -name '*.fold' | sort)
echo "no-crash: $count files"
exit $status
