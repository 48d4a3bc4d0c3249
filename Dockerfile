# The sidecar image: ingress2nginx on Node 20 beside the same nginx the Pod serves with, so that
# `nginx -V` and `nginx -t` here speak for the nginx container. Both bases are exact releases (add their
# digests, `FROM node:20.20.2-bookworm-slim@sha256:…`, where your registry policy asks for them); keep
# the nginx tag equal to the one in deploy/base/deployment.yaml. Build: README, "Run in a cluster".
FROM node:20.20.2-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.image.json ./
COPY src ./src
RUN npx tsc -p tsconfig.image.json && npm prune --omit=dev --no-audit --no-fund

# Debian 12 underneath as in the Node image, so its node binary finds the same C++ runtime (apt's).
FROM nginx:1.28.0
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /opt/ingress2nginx
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/src ./dist/src
COPY bin ./bin
COPY templates ./templates
# nginx's own user in this image: the sidecar writes the files nginx reads as their owner (no chown).
USER 101:101
ENTRYPOINT ["node", "/opt/ingress2nginx/bin/ingress2nginx"]
CMD ["run", "--help"]
