"""Fakes of the video providers' public HTTP APIs, as small real aiohttp servers on 127.0.0.1: ``runway``,
``luma``, and ``fal`` (Pika through fal.ai's queue). Shared machinery (tasks on the loop clock, scripted
faults, the served MP4) is in ``common``."""
