"""The one reader of the notification log by pages: every follower of the log (the views, the
invalidation index, `verify`'s audit, the bench) reads it through `pages`.

The library's `notification_log.select` is capped at 10 notifications a call, so pages come
straight from the recorder's public `select_notifications`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from eventsourcing.persistence import ApplicationRecorder, Notification

PAGE = 1_000


def pages(
    recorder: ApplicationRecorder, after: int = 0, *, stop: int | None = None,
    topics: Sequence[str] = (), size: int = PAGE,
) -> Iterator[Sequence[Notification]]:
    """Notifications with ids after `after` up to `stop` (inclusive; None: the end), of
    `topics` only (empty: every topic), in id order, `size` at most a page. The last page
    yielded is the first one shorter than `size`, perhaps empty: the reader has then read
    everything up to `stop` (or the end as it was)."""
    while True:
        page = recorder.select_notifications(
            after, size, stop=stop, topics=topics, inclusive_of_start=False
        )
        yield page
        if len(page) < size:
            return
        after = page[-1].id


def notifications(
    recorder: ApplicationRecorder, after: int = 0, *, stop: int | None = None,
    topics: Sequence[str] = (),
) -> Iterator[Notification]:
    """The notifications of `pages`, one by one."""
    for page in pages(recorder, after, stop=stop, topics=topics):
        yield from page
