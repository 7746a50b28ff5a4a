"""An in-process Flower Grid: the ServerApp side of the Message API, delivering each message to
the ClientApp by a direct call. Tests and the embedded default use it; the same strategy and
ClientApp run unchanged in Flower's simulation engine (Ray) and in a deployment.

It touches one Flower internal, `flwr.supercore.task_identity.TaskIdentity` (the run, node and
task ids a Message reads when it is built), so flwr is pinned to 1.42.x and a test guards it.
The identity is set on entering the grid and restored on leaving.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flwr.app import Context, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid
from flwr.supercore.run import Run
from flwr.supercore.task_identity import TaskIdentity

from paperplug.checks import check_scalar, check_sequence, check_type

SERVER_NODE_ID = 0


def message_bytes(content: RecordDict) -> int:
    """Bytes of payload a message carries: every array's buffer, every config list of floats
    (as float64) and every metric value (8 bytes each)."""
    total = 0
    for record in content.array_records.values():
        total += sum(len(arr.data) for arr in record.values())
    for record in content.config_records.values():
        for value in record.values():
            total += 8 * len(value) if isinstance(value, list) else 8
    for record in content.metric_records.values():
        total += 8 * len(record)
    return total


class LocalGrid(Grid):
    """`num_nodes` virtual SuperNodes in this process; node i has node id i + 1 and
    `node_config = {"partition-id": i, "num-partitions": num_nodes}`, as in Flower's simulation.

    Use it as a context manager (`FluxStrategy.start` enters one that is not). `total_bytes`
    counts the payload sent both ways so far. A ClientApp that raises fails the run at once
    with its own error."""

    def __init__(self, client_app: ClientApp, num_nodes: int, run_id: int = 1) -> None:
        check_type(client_app, "client_app", ClientApp, what="a flwr ClientApp")
        num_nodes = check_scalar(num_nodes, "num_nodes", "int", low=1)
        run_id = check_scalar(run_id, "run_id", "int", low=0)
        self.client_app = client_app
        self._run = Run.create_empty(run_id)
        self._contexts = {
            i + 1: Context(
                run_id=run_id,
                node_id=i + 1,
                node_config={"partition-id": i, "num-partitions": num_nodes},
                state=RecordDict(),
                run_config={},
            )
            for i in range(num_nodes)
        }
        self._replies: dict[str, Message] = {}
        self._counter = 0
        self._saved: tuple[Any, Any, Any] | None = None
        self.total_bytes = 0

    def __enter__(self) -> LocalGrid:
        self._saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
        TaskIdentity.run_id = self._run.run_id
        TaskIdentity.node_id = SERVER_NODE_ID
        TaskIdentity.task_id = 0
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._saved is not None
        TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id = self._saved
        self._saved = None

    @property
    def active(self) -> bool:
        """Whether the grid is entered (messages can be built and sent)."""
        return self._saved is not None

    def set_run(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        return self._run

    def create_message(
        self,
        content: RecordDict,
        message_type: str,
        dst_node_id: int,
        group_id: str,
        ttl: float | None = None,
    ) -> Message:
        return Message(
            content=content,
            dst_node_id=dst_node_id,
            message_type=message_type,
            group_id=group_id,
            ttl=ttl,
        )

    def get_node_ids(self) -> Iterable[int]:
        return list(self._contexts)

    def push_messages(self, messages: Iterable[Message]) -> Iterable[str]:
        messages = check_sequence(messages, "messages", Message, min_len=0, what="flwr Messages")
        for i, msg in enumerate(messages):
            if msg.metadata.dst_node_id not in self._contexts:
                raise ValueError(
                    f"messages[{i}] is addressed to node {msg.metadata.dst_node_id}; this grid "
                    f"has nodes {min(self._contexts)}..{max(self._contexts)}"
                )
        ids = []
        for msg in messages:
            node = msg.metadata.dst_node_id
            self._counter += 1
            msg.metadata.__dict__["_message_id"] = f"local-{self._counter}"
            self.total_bytes += message_bytes(msg.content)
            reply = self.client_app(msg, self._contexts[node])
            if reply.has_error():
                raise RuntimeError(f"client node {node} failed: {reply.error.reason}")
            self.total_bytes += message_bytes(reply.content)
            self._replies[msg.metadata.message_id] = reply
            ids.append(msg.metadata.message_id)
        return ids

    def pull_messages(self, message_ids: Iterable[str]) -> Iterable[Message]:
        return [self._replies.pop(i) for i in message_ids if i in self._replies]

    def send_and_receive(
        self, messages: Iterable[Message], *, timeout: float | None = None
    ) -> Iterable[Message]:
        """The replies to `messages`, each delivered by a direct call: `timeout` (seconds > 0,
        or None) never runs out here."""
        check_scalar(timeout, "timeout", "real", low=0, inclusive="neither", allow_none=True)
        return self.pull_messages(self.push_messages(messages))
