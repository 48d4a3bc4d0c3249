# The sidecar image: ingress2nginx on Node 20 beside the same nginx the Pod serves with, so that
# `nginx -V` and `nginx -t` here speak for the nginx container. Keep the nginx tag equal to the one in
# deploy/deployment.yaml.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
RUN npm install --no-audit --no-fund
COPY src ./src
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM nginx:1.28.0
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /opt/ingress2nginx
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY bin ./bin
COPY templates ./templates
ENTRYPOINT ["node", "/opt/ingress2nginx/bin/ingress2nginx"]
CMD ["run", "--help"]
