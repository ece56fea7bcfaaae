#!/bin/bash
# process queue.txt lines "file example" sequentially, forever until STOP exists
cd /work/red7
touch done.txt
while [ ! -f STOP ]; do
  line=$(grep -vxF -f done.txt queue.txt 2>/dev/null | head -1)
  if [ -z "$line" ]; then sleep 2; continue; fi
  ./run.sh $line
  echo "$line" >> done.txt
done
