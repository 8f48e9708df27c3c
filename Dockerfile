# metrics-scheduler image: built on Debian 12, run on Debian 12 slim with
# only the binary, the shared libraries it links and a non-root user.
#
#   docker build -t metrics-scheduler:0.1.0 .
#
# The runtime packages are what `ldd metrics-scheduler` resolves to
# (`dpkg -S` on each library); keep them in step when a dependency changes.

FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ca-certificates \
      libcurl4-openssl-dev libsimdjson-dev libabsl-dev libfmt-dev \
      libgoogle-glog-dev libgflags-dev libyaml-cpp-dev libcpp-httplib-dev \
      libgtest-dev libgmock-dev libbenchmark-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Only the scheduler; the tests and benchmarks are configured but not built.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
 && cmake --build /build --target metrics-scheduler \
 && strip /build/metrics-scheduler

FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates libcurl4 libsimdjson14 libabsl20220623 \
      libgoogle-glog0v6 libyaml-cpp0.7 libcpp-httplib0.11 libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 metrics-scheduler \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin metrics-scheduler
COPY --from=build /build/metrics-scheduler /usr/local/bin/metrics-scheduler
USER 65532:65532
# 10260: the plain port (probes; /metrics too unless --secure-port); 10259:
# --secure-port as the shipped manifests set it (/metrics, with a token).
EXPOSE 10260 10259
ENTRYPOINT ["/usr/local/bin/metrics-scheduler"]
