"""A command's output as it arrives, as text events for the agents' protocols (`serve`'s
`output` events, MCP's progress notifications): each stream decoded as UTF-8 across
chunk boundaries (a character split between two reads is sent whole, in the later
event), undecodable bytes replaced as the final result replaces them."""

from __future__ import annotations

import codecs
from collections.abc import Callable

Emit = Callable[[str, str], None]  # ("stdout" | "stderr", text)


class TextEvents:
    """`executor.OnOutput` → `emit(stream, text)`; `flush()` after the run sends what
    an unfinished character held back."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.decoders: dict[str, codecs.IncrementalDecoder] = {}

    def __call__(self, stream: str, data: bytes) -> None:
        decoder = self.decoders.get(stream)
        if decoder is None:
            decoder = self.decoders[stream] = codecs.getincrementaldecoder("utf-8")("replace")
        text = decoder.decode(data)
        if text:
            self.emit(stream, text)

    def flush(self) -> None:
        for stream, decoder in self.decoders.items():
            text = decoder.decode(b"", final=True)
            if text:
                self.emit(stream, text)
