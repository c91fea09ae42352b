#!/usr/bin/env bash
# check-container.sh verifies agentd's container image as far as the machine
# it runs on allows, and says what it could not verify.
#
#   scripts/check-container.sh            # checks 1-2, and 3 if a Docker engine answers
#   STANDIN=1 scripts/check-container.sh  # 3 with stand-in base images (see below)
#
# 1. The Dockerfile: a static build (CGO_ENABLED=0), a numeric non-root USER,
#    a HEALTHCHECK that runs the binary itself (the runtime image has no
#    shell), the migrations embedded in the binary (go:embed).
# 2. The binary, built as the Dockerfile's build stage builds it: static (no
#    ELF interpreter), the migrations and the OpenAPI document inside it; run
#    as an unprivileged user on loopback, `server healthcheck` succeeds, and
#    fails against a port nobody listens on.
# 3. The image, when a Docker engine answers: docker build, docker run (no
#    network but the container's loopback), the HEALTHCHECK reports healthy,
#    the process runs as 65532; docker-compose.yml parses.
#    The base images come from a registry; a machine that cannot reach it
#    can set STANDIN=1: where a base image is missing, a stand-in is built
#    under its name — for the build stage this machine's Go toolchain on
#    busybox (needs /bin/busybox, a static busybox), for the runtime stage
#    an empty image with distroless's nonroot user. A stand-in proves the
#    Dockerfile's own steps, not what the real base images bring.
#
# It exits non-zero on the first failed check. Everything it starts, it
# stops.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }
ok() { printf '   ok: %s\n' "$*"; }
fail() { printf '   FAIL: %s\n' "$*" >&2; exit 1; }
notverified=()

work=$(mktemp -d)
cleanup() {
	[[ -n "${server_pid:-}" ]] && kill "$server_pid" 2>/dev/null || true
	[[ -n "${container:-}" ]] && docker rm -f "$container" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

# standins builds, for each base image of the Dockerfile that is missing,
# a stand-in under its name (see the header), and notes it.
standins() {
	local build runtime
	build=$(awk '/^FROM .* AS build/{print $2}' Dockerfile)
	runtime=$(awk '/^FROM /{b=$2} END{print b}' Dockerfile)
	if ! docker image inspect "$build" >/dev/null 2>&1; then
		[[ -x /bin/busybox ]] || fail "STANDIN=1 needs a static /bin/busybox for the build stage's shell"
		local ctx="$work/standin-build"
		mkdir -p "$ctx/root/bin" "$ctx/root/usr/local" "$ctx/root/etc/ssl/certs" "$ctx/root/tmp"
		cp /bin/busybox "$ctx/root/bin/"
		for c in sh ls cat mkdir rm cp env; do ln -sf busybox "$ctx/root/bin/$c"; done
		cp -a "$(go env GOROOT)" "$ctx/root/usr/local/go"
		cp -L /etc/ssl/certs/ca-certificates.crt "$ctx/root/etc/ssl/certs/"
		cat >"$ctx/Dockerfile" <<-EOF
			FROM scratch
			COPY root/ /
			ENV PATH=/usr/local/go/bin:/go/bin:/bin GOPATH=/go GOTOOLCHAIN=local HOME=/root
			LABEL agentd.check.standin="this machine's $(go env GOVERSION) on busybox"
		EOF
		docker build -q -t "$build" "$ctx" >/dev/null 2>&1
	fi
	if ! docker image inspect "$runtime" >/dev/null 2>&1; then
		local ctx="$work/standin-runtime"
		mkdir -p "$ctx/root/etc/ssl/certs" "$ctx/root/tmp"
		printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$ctx/root/etc/passwd"
		printf 'root:x:0:\nnonroot:x:65532:\n' >"$ctx/root/etc/group"
		cp -L /etc/ssl/certs/ca-certificates.crt "$ctx/root/etc/ssl/certs/"
		printf 'FROM scratch\nCOPY root/ /\nLABEL agentd.check.standin="an empty image with its nonroot user"\n' >"$ctx/Dockerfile"
		docker build -q -t "$runtime" "$ctx" >/dev/null 2>&1
	fi
}

step "1. Dockerfile"
grep -q 'CGO_ENABLED=0 go build' Dockerfile || fail "the build stage does not build with CGO_ENABLED=0"
ok "static build (CGO_ENABLED=0)"
user=$(awk '/^USER /{u=$2} END{print u}' Dockerfile)
[[ "$user" =~ ^[0-9]+(:[0-9]+)?$ && "${user%%:*}" != 0 ]] || fail "the runtime stage's USER is \"$user\", want a numeric non-root uid"
ok "USER $user"
grep -q '^HEALTHCHECK .*' Dockerfile && grep -A1 '^HEALTHCHECK' Dockerfile | grep -q '"/server", "healthcheck"' ||
	fail "no HEALTHCHECK running /server healthcheck"
ok "HEALTHCHECK runs /server healthcheck"
grep -q 'go:embed \*.sql' migrations/embed.go || fail "migrations/embed.go does not embed the migrations"
ok "migrations embedded (migrations/embed.go)"

step "2. The binary"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/server" ./cmd/server
if readelf -l "$work/server" | grep -q 'INTERP'; then fail "the binary asks for a dynamic loader"; fi
ok "static: no ELF interpreter ($(du -h "$work/server" | cut -f1))"
for m in migrations/*.sql; do
	first=$(grep -m1 -E '^(CREATE|ALTER)' "$m")
	grep -qaF "$first" "$work/server" || fail "$m is not in the binary"
done
ok "every migration is in the binary"
grep -qa 'openapi: ' "$work/server" || fail "the OpenAPI document is not in the binary"
ok "the OpenAPI document is in the binary"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
chmod 755 "$work" "$work/server"
runas=()
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null; then
	runas=(setpriv --reuid=65532 --regid=65532 --clear-groups)
fi
"${runas[@]}" "$work/server" --addr "127.0.0.1:$port" --log-level warn &
server_pid=$!
for _ in $(seq 50); do
	"$work/server" healthcheck --url "http://127.0.0.1:$port/healthz" 2>/dev/null && break
	sleep 0.1
done
"$work/server" healthcheck --url "http://127.0.0.1:$port/healthz" || fail "healthcheck against the running binary"
ok "the binary serves; 'server healthcheck' succeeds${runas:+ (run as uid 65532)}"
kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
if "$work/server" healthcheck --url "http://127.0.0.1:$port/healthz" --timeout 1s 2>/dev/null; then
	fail "healthcheck succeeds with no server"
fi
ok "'server healthcheck' fails when nothing answers"

step "3. The image"
if ! docker info >/dev/null 2>&1; then
	notverified+=("the image build and run (no Docker engine answers)")
else
	if [[ "${STANDIN:-}" == 1 ]]; then
		standins
	fi
	for base in $(awk '/^FROM /{print $2}' Dockerfile); do
		what=$(docker image inspect -f '{{index .Config.Labels "agentd.check.standin"}}' "$base" 2>/dev/null || true)
		[[ -n "$what" ]] && notverified+=("the real base image $base: a stand-in ($what) took its place")
	done
	docker build --network host -t agentd:check . >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "docker build"; }
	ok "docker build"
	[[ $(docker image inspect -f '{{.Config.User}}' agentd:check) == "$user" ]] || fail "the image's user is not $user"
	container=$(docker run -d --network none agentd:check)
	for _ in $(seq 60); do
		health=$(docker inspect -f '{{.State.Health.Status}}' "$container")
		[[ $health == healthy || $health == unhealthy ]] && break
		sleep 1
	done
	[[ $health == healthy ]] || { docker logs "$container" | tail -20; fail "the container is $health"; }
	ok "the container runs and its HEALTHCHECK reports healthy"
	uid=$(docker top "$container" -o pid,uid | awk 'NR == 2 {print $2}')
	[[ "$uid" == "${user%%:*}" ]] || fail "the server runs as uid $uid"
	ok "the server runs as uid $uid"
	docker rm -f "$container" >/dev/null; container=
	if docker compose version >/dev/null 2>&1; then
		AGENTD_API_KEY=check docker compose -f docker-compose.yml config -q && ok "docker-compose.yml parses (docker compose config)"
	elif command -v docker-compose >/dev/null; then
		AGENTD_API_KEY=check docker-compose -f docker-compose.yml config -q && ok "docker-compose.yml parses (docker-compose config)"
	else
		notverified+=("docker-compose.yml (no docker compose here)")
	fi
	notverified+=("the compose deployment itself (its images come from a registry)")
fi

step "Not verified here"
if [[ ${#notverified[@]} -eq 0 && "${STANDIN:-}" != 1 ]]; then
	echo "   nothing"
fi
for n in "${notverified[@]}"; do echo "   - $n"; done
echo "   done"
