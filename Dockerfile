# The hosted `contam app`: the browser page, its input caps and time budget set below.
# Build and run (see docs/app.md):
#   docker build -t contam-app .
#   docker run --rm -p 8501:8501 --memory 1g --read-only --tmpfs /tmp:size=16m contam-app
FROM python:3.11-slim

# NOTE: no bytecode written at run time (nothing is written at all), no pip cache in the image.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /build
COPY pyproject.toml README.md LICENSE ./
COPY contam_cli ./contam_cli
RUN pip install ".[app]" \
    && cd / && rm -rf /build \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin contam

# The caps: bytes of eval, bytes of corpus (all inputs together), seconds per scan.
ENV CONTAM_APP_MAX_EVAL_BYTES=4194304 \
    CONTAM_APP_MAX_CORPUS_BYTES=33554432 \
    CONTAM_APP_MAX_SECONDS=20

USER contam
WORKDIR /home/contam
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4)"]
CMD ["contam", "app", "--host", "0.0.0.0", "--port", "8501"]
