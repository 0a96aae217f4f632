#!/usr/bin/env bash
# The container image, checked end to end with podman (issue 28; not part of `npm test`; see
# docs/guides/deploy-compose.md "Checking the image"). From a clean clone:
#   scripts/container-check.sh [--no-build]
# 1. builds the image (podman build --pull=never --network=host; --format docker keeps HEALTHCHECK)
#    and reports its size against the 450 MB budget: fails when mediagate's own layers on the
#    published base (estimated from the stand-in, G350) exceed it;
# 2. runs it as it ships: its non-root user, a read-only root filesystem, a volume at /data, a
#    tmpfs at /tmp; checks the user, that / is read-only, ffmpeg and ffprobe, the HEALTHCHECK;
# 3. first steps as an operator: `mediagate keys create` through `podman exec`, a picture and a
#    video submitted, long-polled, downloaded (a real PNG and MP4);
# 4. a rolling restart under load: callers (scripts/container-load.js) submit and long-poll without
#    pause; SIGTERM while generations run (grace 1 s: they go back to the queue) and requests are under
#    way: the container exits 0 with 'mediagate stopped' last; a new container on the same volume,
#    the callers still going (refused connections while none listens are tried again); then every
#    accepted task completed, each with exactly one attempt, and no caller saw a 5xx or a reset;
# 5. cleans up (containers, volume; the image stays).
# Needs podman (and, on machines without an image registry, a local node:20-bookworm-slim), curl, node.
# Prints "container check: passed" last and exits 0 when every check holds.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${MEDIAGATE_CHECK_IMAGE:-localhost/mediagate:check}
PORT=${MEDIAGATE_CHECK_PORT:-18790}
NAME=mediagate-check-$$
VOLUME=mediagate-check-$$
BOOTSTRAP=check-bootstrap-$(node -e 'process.stdout.write(require("crypto").randomBytes(12).toString("hex"))')
BASE="http://127.0.0.1:$PORT"
LOOPS=${MEDIAGATE_CHECK_LOOPS:-8}
BUDGET_MB=450

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'container check FAILED: %s\n' "$*" >&2; exit 1; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);const r=process.argv[1].split(".").reduce((o,k)=>o==null?o:o[k],v);process.stdout.write(r==null?"":String(r))})' "$1"; }
cleanup() {
  podman rm -f -t 0 "$NAME" "$NAME-2" >/dev/null 2>&1 || true
  podman volume rm -f "$VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

run() { # run NAME: the image as it ships, on the volume
  # (podman's complaint that it finds no systemd to schedule the HEALTHCHECK with is left out: the check runs it itself)
  podman run -d --name "$1" --network=host --read-only --tmpfs /tmp -v "$VOLUME:/data" \
    -e PORT="$PORT" -e MEDIAGATE_PUBLIC_URL="$BASE" -e MEDIAGATE_BOOTSTRAP_KEY="$BOOTSTRAP" \
    -e MEDIAGATE_SHUTDOWN_GRACE_SECONDS=1 -e MEDIAGATE_RATE_LIMIT=off "$IMAGE" 2> >(grep -v 'systemd connection' >&2) >/dev/null
  for _ in $(seq 1 120); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/readyz")" = 200 ]; then return 0; fi
    if [ "$(podman inspect -f '{{.State.Running}}' "$1")" != true ]; then podman logs "$1" | tail -20; fail "$1 stopped while starting"; fi
    sleep 1
  done
  podman logs "$1" | tail -20
  fail "$1 did not become ready within 120 s"
}

submit() { # submit KEY ROUTE BODY [FIELD] -> the new task's id (FIELD of the reply, default id; empty when not accepted)
  local reply
  reply=$(curl -s -m 30 -X POST "$BASE$2" -H "Authorization: Bearer $1" -H 'content-type: application/json' -d "$3" || true)
  printf '%s' "$reply" | json "${4:-id}" 2>/dev/null || true
}

final() { # final KEY ID -> the task's final JSON (long-polls until it is finished)
  local reply status
  for _ in $(seq 1 40); do
    reply=$(curl -s -m 40 "$BASE/v1/result/$2?wait=30" -H "Authorization: Bearer $1")
    status=$(printf '%s' "$reply" | json status)
    case "$status" in completed|failed|cancelled) printf '%s' "$reply"; return 0 ;; esac
  done
  fail "task $2 did not finish: $reply"
}

if [ "${1:-}" != --no-build ]; then
  step "build $IMAGE"
  podman build --pull=never --network=host --format docker -t "$IMAGE" \
    --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" . >/tmp/mediagate-container-check-build.log 2>&1 \
    || { tail -30 /tmp/mediagate-container-check-build.log; fail "the build failed (log: /tmp/mediagate-container-check-build.log)"; }
fi

step "image size"
# Debian's slim images (the published node:20-bookworm-slim's base) leave out documentation, manual
# pages and translations; this machine's stand-in has them. The published image adds yarn (~5 MB).
BASE_IMAGE=docker.io/library/node:20-bookworm-slim
mb() { echo $((($1 + 500000) / 1000000)); }   # bytes -> MB, rounded
size=$(podman image inspect -f '{{.Size}}' "$IMAGE")
base_size=$(podman image inspect -f '{{.Size}}' "$BASE_IMAGE" 2>/dev/null || echo 0)
own_mb=$(mb $((size - base_size)))
slim_out_kb=$(podman run --rm --network=host "$BASE_IMAGE" sh -c 'du -skc /usr/share/doc /usr/share/man /usr/share/locale /usr/share/info /usr/share/groff /usr/share/lintian 2>/dev/null | tail -1 | cut -f1' 2>/dev/null || echo 0)
published_mb=$(($(mb $((base_size - slim_out_kb * 1024))) + 5))
echo "image: $(mb "$size") MB (budget $BUDGET_MB MB); its base node:20-bookworm-slim here: $(mb "$base_size") MB; mediagate's own layers: $own_mb MB"
echo "with the published base (this base without what Debian's slim images leave out, $(mb $((slim_out_kb * 1024))) MB, plus yarn): about $published_mb + $own_mb = $((published_mb + own_mb)) MB"
podman image inspect -f '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$IMAGE" | sed 's/^/labels: version, revision: /'
[ $((published_mb + own_mb)) -le $BUDGET_MB ] || fail "over the $BUDGET_MB MB budget with the published base image"
[ "$(mb "$size")" -le $BUDGET_MB ] || echo "note: over $BUDGET_MB MB with this machine's stand-in base image (see docs/guides/deploy-compose.md \"Image size\")"

step "run: non-root, read-only root filesystem, /data volume, /tmp tmpfs"
podman volume create "$VOLUME" >/dev/null
run "$NAME"
[ "$(podman exec "$NAME" id -u)" = 10001 ] || fail "not running as uid 10001"
if podman exec "$NAME" sh -c 'touch /app/x' 2>/dev/null; then fail "the root filesystem is writable"; fi
podman exec "$NAME" sh -c 'touch /data/.w /tmp/.w && rm /data/.w /tmp/.w' || fail "/data or /tmp is not writable"
for tool in @ffmpeg-installer/ffmpeg @ffprobe-installer/ffprobe; do
  version=$(podman exec "$NAME" sh -c "\"\$(node -p 'require(\"$tool\").path')\" -version") || fail "$tool does not run as the image's user"
  printf '%s\n' "$version" | head -1
done
podman healthcheck run "$NAME" 2>/dev/null || fail "the image's HEALTHCHECK failed"
echo "uid 10001, / read-only, /data and /tmp writable, HEALTHCHECK healthy"

step "first image end to end: a key made with podman exec, a picture and a video"
KEY=$(podman exec "$NAME" mediagate keys create --name container-check 2>/dev/null | tail -1)
[[ "$KEY" == mg_* ]] || fail "mediagate keys create printed no key"
pic=$(submit "$KEY" /v1/pic/images '{"model":"pic-2","prompt":"a red fox","resolution":"2k","size":"16:9"}')
[ -n "$pic" ] || fail "the picture was not accepted"
url=$(final "$KEY" "$pic" | json image_url)
curl -s -o /tmp/mediagate-check.png "$url"
node -e 'const b=require("fs").readFileSync("/tmp/mediagate-check.png"); if (b.toString("hex",0,8)!=="89504e470d0a1a0a") process.exit(1); console.log(`picture: PNG ${b.readUInt32BE(16)}x${b.readUInt32BE(20)}, ${b.length} bytes`)' || fail "the picture is not a PNG"
vid=$(submit "$KEY" /v1/videos/videos '{"model":"videos_fast","prompt":"waves","duration":4}' data.projectId)
[ -n "$vid" ] || fail "the video was not accepted"
vurl=$(final "$KEY" "$vid" | json video_url)
curl -s -o /tmp/mediagate-check.mp4 "$vurl"
node -e 'const b=require("fs").readFileSync("/tmp/mediagate-check.mp4"); if (b.toString("latin1",4,8)!=="ftyp") process.exit(1); console.log(`video: MP4, ${b.length} bytes`)' || fail "the video is not an MP4"
rm -f /tmp/mediagate-check.png /tmp/mediagate-check.mp4

step "rolling restart under load: SIGTERM while $LOOPS callers submit and long-poll, the container started again on the same volume"
load=$(mktemp -d)
node scripts/container-load.js "$BASE" "$KEY" "$load" "$LOOPS" &
loader=$!
for _ in $(seq 1 300); do   # until a generation runs
  [ -n "$(curl -s "$BASE/v1/tasks?status=processing&limit=1" -H "Authorization: Bearer $KEY" | json data.0)" ] && break
  sleep 0.2
done
sleep 1                     # submits and long-polls under way
touch "$load/signal"
podman kill --signal TERM "$NAME" >/dev/null
code=$(podman wait "$NAME")
podman logs "$NAME" 2>&1 | grep -E '"shutting down|mediagate stopped' | cut -c1-200 || true
running=$(podman logs "$NAME" 2>&1 | grep '"shutting down' | json running)
handed=$(podman logs "$NAME" 2>&1 | grep -c 'returned to the queue on shutdown' || true)
echo "generations running at the signal: $running; handed back to the queue at the end of the grace: $handed"
[ "${running:-0}" -gt 0 ] || fail "no generation was running at the signal: the restart did not test a drain"
[ "$code" = 0 ] || fail "the container exited $code after SIGTERM"
podman logs "$NAME" 2>&1 | tail -1 | grep -q 'mediagate stopped' || fail "the last log line is not 'mediagate stopped'"
echo "exit code 0, last log line 'mediagate stopped'; the callers go on (refused connections while no gateway listens)"
run "$NAME-2"
sleep 3                     # the callers submit and poll against the new container
touch "$load/stop"
wait "$loader" || fail "the callers' script failed"
node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const ids = Object.keys(s.tasks), open = ids.filter((id) => s.tasks[id] !== "completed");
  const problems = [...s.failures];
  if (open.length) problems.push(`tasks not completed: ${open.map((id) => `${id} ${s.tasks[id]}`).join(", ")}`);
  if (s.atSignal.polls + s.atSignal.submits === 0) problems.push("no request was under way at the signal: the drain was not exercised");
  if (ids.length === 0) problems.push("no task was accepted");
  if (problems.length) { console.error(problems.slice(0, 10).join("\n")); process.exit(1); }' "$load/summary.json" \
  || fail "a caller saw a failure (a 5xx, a reset, an empty reply) or a task did not complete"
accepted=$(node -p 'Object.keys(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).tasks).length' "$load/summary.json")
rm -rf "$load"
attempts=$(podman exec "$NAME-2" node -e '
  const Database = require("/app/node_modules/better-sqlite3");
  const db = new Database("/data/mediagate.db", { readonly: true });
  console.log(JSON.stringify(db.prepare("SELECT status, attempts, COUNT(*) AS tasks FROM tasks GROUP BY status, attempts").all()));')
echo "tasks by status and attempts: $attempts"
printf '%s' "$attempts" | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.exit(JSON.parse(s).every(r=>r.status==="completed"&&r.attempts===1)?0:1))' \
  || fail "a task is not completed with exactly one attempt"
podman kill --signal TERM "$NAME-2" >/dev/null
[ "$(podman wait "$NAME-2")" = 0 ] || fail "the second container did not exit 0"
echo "all $accepted accepted tasks completed across the restart, each with one attempt; no caller saw a 5xx or a reset"

printf '\ncontainer check: passed\n'
