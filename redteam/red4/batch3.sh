#!/bin/bash
cd /work/red4
while pgrep -x -f "/bin/bash ./batch2.sh" >/dev/null; do sleep 5; done
for pf in neg/a18b_conj_copy_negation_methods ew/a08b_oob_store_off_by_one ew/a21b_real_launch_count_25 ew/a20b_host_call_count_25 ewbf/h13_ew_bf16_native ew/h14_autograd_fn_helper ew/h15_triton_op ew/a24_autotune_bad_config ew/a16_int32_offsets ew/a20_host_call_count; do
  ./run.sh ${pf%%/*} ${pf#*/}.py
done
