"""Which channel layer a deployment gets: our Postgres LISTEN/NOTIFY layer by default (no Redis
to run), channels-redis when REDIS_URL is set; with a Redis server on this machine, a message
really crosses processes through it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import django, os, json; os.environ['DJANGO_SETTINGS_MODULE']='twinsite.settings'; "
         "from django.conf import settings; print(json.dumps(settings.CHANNEL_LAYERS['default']))")

# Joins a conversation's group through the configured layer, says so, and prints what arrives.
LISTENER = """
import asyncio, json, os
os.environ['DJANGO_SETTINGS_MODULE'] = 'twinsite.settings'
import django; django.setup()
from channels.layers import get_channel_layer
async def main():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add('conversation.0123456789abcdef0123456789abcdef', channel)
    print('listening', flush=True)
    message = await asyncio.wait_for(layer.receive(channel), 120)
    print(json.dumps(message), flush=True)
asyncio.run(main())
"""


def settings_with(**env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("TWIN_", "REDIS_"))} | env
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment, capture_output=True, text=True,
                          check=False)


def test_postgres_by_default_redis_when_configured_and_a_bad_url_stops_start_up():
    default = settings_with()
    assert json.loads(default.stdout) == {"BACKEND": "chat.layers.PostgresNotifyChannelLayer"}, default.stderr
    redis = settings_with(REDIS_URL="redis://:secret@127.0.0.1:6390/2")
    assert json.loads(redis.stdout) == {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {
        "hosts": [{"address": "redis://:secret@127.0.0.1:6390/2", "socket_timeout": 30}]}}
    bad = settings_with(REDIS_URL="http://127.0.0.1:6379")
    assert bad.returncode != 0 and "REDIS_URL must look like redis://" in bad.stderr


@pytest.mark.skipif(shutil.which("redis-server") is None,
                    reason="REDIS LAYER TEST SKIPPED: no redis-server here (apt-get install redis-server)")
def test_with_redis_a_group_message_crosses_processes(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REDIS_")} | {
        "REDIS_URL": f"redis://127.0.0.1:{port}/0", "DJANGO_SETTINGS_MODULE": "twinsite.settings"}
    listener = None
    try:
        deadline = time.monotonic() + 20
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        listener = subprocess.Popen([sys.executable, "-c", LISTENER], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        assert listener.stdout.readline().strip() == "listening", listener.stderr.read()
        time.sleep(6)  # a quiet socket for longer than redis-py 8's default read timeout (5 s)
        sender = subprocess.run([sys.executable, "-c", (
            "import asyncio, os; import django; django.setup()\n"
            "from channels.layers import get_channel_layer\n"
            "asyncio.run(get_channel_layer().group_send('conversation.0123456789abcdef0123456789abcdef', "
            "{'type': 'chat.event', 'event': {'type': 'approval', 'status': 'approved'}}))")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
        assert sender.returncode == 0, sender.stderr
        line = listener.stdout.readline()
        assert line, listener.stderr.read()
        received = json.loads(line)
        assert received == {"type": "chat.event", "event": {"type": "approval", "status": "approved"}}
    finally:
        if listener is not None:
            listener.kill()
            listener.wait(timeout=10)
        server.terminate()
        server.wait(timeout=10)
