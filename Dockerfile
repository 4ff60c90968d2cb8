# syntax=docker/dockerfile:1
#
# cursus MCP server image.
#
# The build stage runs scripts/build.sh, the same command CI runs, so the
# binary CI tests is the binary this image ships. The runtime stage is
# distroless static: no shell, no package manager, nothing but the binary,
# CA certificates and /etc/passwd for the nonroot user (UID 65532).
#
#   docker build --build-arg VERSION=1.2.3 -t cursus-mcp:1.2.3 .
#   docker run --rm -p 8080:8080 --read-only --tmpfs /tmp cursus-mcp:1.2.3

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION} AS build
WORKDIR /src
# Module downloads first, so source edits do not refetch dependencies.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN VERSION="${VERSION}" scripts/build.sh /out/cursus
# The runtime image has no shell to mkdir with, so the mount points are made
# here and copied over with the right owner.
RUN mkdir -p /out/workspace /out/etc/cursus && cp deploy/docker/cursus.yaml /out/etc/cursus/cursus.yaml

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/cursus /cursus
COPY --from=build --chown=65532:65532 /out/workspace /workspace
COPY --from=build /out/etc/cursus/cursus.yaml /etc/cursus/cursus.yaml
# Numeric, so Kubernetes runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
# File arguments resolve inside /workspace; mount a volume there (and a
# tmpfs/emptyDir on /tmp) and the root filesystem can stay read-only.
WORKDIR /workspace
EXPOSE 8080
# No HEALTHCHECK: Kubernetes probes GET /healthz and /readyz instead, and
# the image has no shell or curl to run one with.
ENTRYPOINT ["/cursus","serve","--addr","0.0.0.0:8080"]
CMD ["--config","/etc/cursus/cursus.yaml"]
