# docsplit HTTP service (the `web` extra).
#   docker build --build-arg DOCSPLIT_BUILD_COMMIT=$(git rev-parse --short HEAD) -t docsplit .
#   docker run --rm -p 8000:8000 docsplit
# Settings are DOCSPLIT_WEB_* environment variables (README, "Limits"); the container listens
# on 0.0.0.0:8000 as an unprivileged user.

ARG NODE_VERSION=20

# --- build: dev dependencies + tsc -> dist/ -------------------------------------------------
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# --ignore-scripts: `prepare` (tsc) needs the sources, copied below; build explicitly after.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json index.ts testing.ts ./
COPY core ./core
COPY plugins ./plugins
COPY cli ./cli
COPY server ./server
RUN npm run build

# --- runtime: production dependencies, compiled code, vendored grammars ---------------------
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8000
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 # Optional dependencies are skipped silently when they cannot install: fail the build here
 # rather than ship a service whose `serve` answers "needs the web extra".
 && node -e "Promise.all(['fastify','@fastify/swagger-ui','@fastify/multipart','@fastify/rate-limit','piscina','ioredis'].map((m) => import(m))).catch((e) => { console.error('web extra missing:', e.message); process.exit(1) })"
COPY --from=build /app/dist ./dist
# The code parser loads its tree-sitter grammars from the source folder next to dist/.
COPY --from=build /app/plugins/formats/code/grammars ./plugins/formats/code/grammars

ARG DOCSPLIT_BUILD_COMMIT=""
ENV DOCSPLIT_BUILD_COMMIT=${DOCSPLIT_BUILD_COMMIT}

USER node
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1 so SIGTERM reaches the service: it stops accepting, lets in-flight splits
# finish within their budget, and exits 0.
CMD ["node", "dist/cli/index.js", "serve"]
