#!/usr/bin/env bash
# One rung-worker for one SLURM task (started by workers.sbatch through srun). Its worker id is
# stable across requeues of the job (job id, node, local task id), so the coordinator sees the
# same worker come back. --gpus is the number of GPUs SLURM gave this task (CUDA_VISIBLE_DEVICES).
# RUNG_TRAINER: the rung-train to run (e.g. the GPU build); default: the one beside rung-worker.
# Arguments are more rung-worker flags (workers.sbatch passes on its own). Under SLURM rung-worker
# reads the job's end time itself and stops --end-margin seconds before it.
set -euo pipefail

shared=${RUNG_SHARED:?set by workers.sbatch}
gpus=0
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
  IFS=, read -r -a visible <<< "$CUDA_VISIBLE_DEVICES"
  gpus=${#visible[@]}
fi
trainer=()
if [[ -n "${RUNG_TRAINER:-}" ]]; then trainer=(--trainer "$RUNG_TRAINER"); fi
work_dir=${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/rung-work-$SLURM_JOB_ID-$SLURM_PROCID

exec rung-worker \
  --coordinator "${RUNG_COORDINATOR:?set by workers.sbatch}" \
  --tls-ca "$shared/tls/ca.crt" \
  --worker-token-file "$shared/tokens/worker.token" \
  --worker-id "slurm-$SLURM_JOB_ID-$SLURMD_NODENAME-$SLURM_LOCALID" \
  --name "slurm job $SLURM_JOB_ID" \
  --host "$SLURMD_NODENAME" \
  --cpus "${SLURM_CPUS_PER_TASK:-1}" \
  --gpus "$gpus" \
  --work-dir "$work_dir" \
  --grace-seconds 90 \
  "${trainer[@]}" "$@"
