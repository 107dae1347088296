# syntax=docker/dockerfile:1
# Production image: compiled JavaScript run by `node` as a non-root user.
#   build    npm ci (with dev dependencies), `npm run build` → dist/ (JS + the prebuilt workflow bundle)
#   runtime  production dependencies only + dist/ + config/; base of the two targets below
#   worker   `node dist/worker/main.js`, HEALTHCHECK on the worker's /healthz (WORKER_HEALTH_PORT)
#   api      `node dist/api/main.js`, HEALTHCHECK on /readyz (the default target)
# docker-compose.yml builds `api` and `worker`; the migration job runs `dist/scripts/migrate.js`
# from the api target.
ARG NODE_IMAGE=node:22.23.3-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api ./api
COPY activities ./activities
COPY db ./db
COPY domain ./domain
COPY infra ./infra
COPY scripts ./scripts
COPY telemetry ./telemetry
COPY worker ./worker
COPY workflows ./workflows
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: the production tree needs none (the Temporal core bridge ships prebuilt).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY config ./config
COPY --from=build /app/dist ./dist
# The official image's unprivileged user (uid 1000); the app writes nothing to its own files.
USER node
ENV HOST=0.0.0.0 PORT=3000 WORKER_HEALTH_PORT=3001

FROM runtime AS worker
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "dist/scripts/healthcheck.js", "worker"]
# The launcher adds WORKER_NODE_FLAGS (infra/nodeFlags.ts) as this Node supports them, then execs the worker.
CMD ["node", "dist/scripts/launch.js", "worker"]

FROM runtime AS api
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["node", "dist/scripts/healthcheck.js", "api"]
# The launcher adds PROCESS_NODE_FLAGS (infra/nodeFlags.ts) as this Node supports them, then execs the API.
CMD ["node", "dist/scripts/launch.js", "api"]
