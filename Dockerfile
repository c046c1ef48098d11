# syntax=docker/dockerfile:1
#
# booking-sync as a sidecar: `docker run IMAGE` syncs on SYNC_SCHEDULE until stopped and serves
# /healthz, /readyz, /metrics and POST /sync; `docker run IMAGE backfill` (or any other command)
# runs that command instead, because the CLI is the entrypoint.
#
# Node 24: the LTS line supported longest among those better-sqlite3 12 ships prebuilt binaries
# for (until April 2028; Node 22 ends in April 2027), which matters for a sidecar left running for
# months. Where no prebuilt binary can be fetched, the toolchain stage compiles it (~90 s).
# test/image.test.ts performs the `deps` stage's install and the runtime's start in a clean
# directory; keep the two in step.
ARG NODE_VERSION=24

FROM node:${NODE_VERSION}-slim AS toolchain
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches this Node and libc.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*

# Compiles the TypeScript; its node_modules (dev dependencies included) never reach the image.
FROM toolchain AS build
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# Production dependencies only, from the lockfile alone, so editing the source does not reinstall them.
FROM toolchain AS deps
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts=false --no-audit --no-fund

FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
# The application stays owned by root: the non-root process can read it but not change it.
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY drizzle ./drizzle
# Created and handed to `node` before VOLUME, since changes after VOLUME would be discarded.
RUN mkdir -p /data && chown node:node /data
USER node
# Bound beyond loopback, so POST /sync answers 403 until TRIGGER_TOKEN or TRIGGER_TOKEN_FILE is set
# (the health endpoints answer either way); the database is created 0600 unless BOOKING_DB_MODE says.
ENV BOOKING_DB_PATH=/data/bookings.db \
    HTTP_PORT=8080 \
    HTTP_HOST=0.0.0.0
VOLUME /data
EXPOSE 8080
# No curl in the slim image: Node's own fetch probes /healthz. With HTTP_PORT=0 (endpoint off),
# run the container with --no-healthcheck.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.HTTP_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The launcher's memory flags (src/cli.ts's first line): a small young generation and an old one
# held near what it needs, for a sidecar's footprint; what they cost and save is in docs/performance.md.
# glibc: buffers over 128 KiB (response bodies) mapped and unmapped, never left in its heap.
ENV MALLOC_MMAP_THRESHOLD_=131072
ENTRYPOINT ["node", "--max-semi-space-size=4", "--heap-growing-percent=30", "dist/cli.js"]
CMD ["run"]
