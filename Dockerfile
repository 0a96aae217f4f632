# mediagate: one image for every role (`serve --role api|worker|all`), see docs/guides/deploy-compose.md.
# Non-root (uid 10001), runs on a read-only root filesystem: state only under the /data volume, scratch
# in a tmpfs at /tmp. tini is PID 1 and hands SIGTERM to Node, which drains and exits 0 (G340-G345).
#   podman build --format docker -t mediagate .      (docker build -t mediagate .)
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compilers for better-sqlite3, the TypeScript build, then production modules only ----
FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ tini \
 && rm -rf /var/lib/apt/lists/*
# native modules compile against the headers of the image's own Node instead of downloading them
ENV npm_config_nodedir=/usr/local npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY packages/client/tsconfig.json packages/client/
COPY packages/client/src packages/client/src
COPY src src
COPY console console
COPY bin bin
COPY scripts/image-prune.js scripts/image-smoke.js scripts/
# Production modules only, without what a running gateway never reads (G350, G351: better-sqlite3's
# sources and object files, gpt-tokenizer's bundles and other encodings, other packages' ES builds for
# bundlers, tests, examples, type declarations, source maps, docs; licenses stay), then everything the
# gateway loads is loaded and used once. The gateway's and the SDK's own maps and declarations go too.
# (ffprobe's package ships it executable by its owner only: the image's user could not run it)
RUN npm run build \
 && npm prune --omit=dev \
 && node scripts/image-prune.js node_modules \
 && find dist packages/client/dist -type f \( -name '*.map' -o -name '*.d.ts' \) -delete \
 && find node_modules/@ffmpeg-installer node_modules/@ffprobe-installer -type f \( -name ffmpeg -o -name ffprobe \) -exec chmod 0755 {} + \
 && node scripts/image-smoke.js \
 && node bin/mediagate.js --help >/dev/null

# ---- runtime ----
FROM ${NODE_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE_URL=
LABEL org.opencontainers.image.title="mediagate" \
      org.opencontainers.image.description="Self-hostable gateway for asynchronous image/video generation and chat" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="MIT"
# tini (PID 1: hands signals to Node, reaps orphans) comes as its static build from the build stage: no apt here
COPY --from=build /usr/bin/tini-static /usr/bin/tini
RUN groupadd --system --gid 10001 mediagate \
 && useradd --system --no-log-init --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin mediagate \
 && mkdir -p /data \
 && chown 10001:10001 /data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/bin bin
COPY --from=build /app/dist dist
COPY --from=build /app/console/dist console/dist
COPY --from=build /app/packages/client/package.json packages/client/
COPY --from=build /app/packages/client/dist packages/client/dist
RUN ln -s /app/bin/mediagate.js /usr/local/bin/mediagate
ENV NODE_ENV=production \
    MEDIAGATE_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8790
USER 10001:10001
# what the gateway runs, run once as its user
RUN mediagate --help >/dev/null \
 && "$(node -p "require('@ffmpeg-installer/ffmpeg').path")" -version >/dev/null \
 && "$(node -p "require('@ffprobe-installer/ffprobe').path")" -version >/dev/null
VOLUME ["/data"]
EXPOSE 8790
# /readyz without curl: Node's own fetch
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8790)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# signals reach Node through tini; a stop waits for MEDIAGATE_SHUTDOWN_GRACE_SECONDS (25) plus a margin
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--", "mediagate"]
CMD ["serve"]
