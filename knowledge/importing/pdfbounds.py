"""What reading a PDF may spend and what of it counts as text.

pdfminer inflates a PDF's streams whole and has no page or time cap, so a PDF is read in a child
process (``run_bounded``: started with ``spawn``, nothing inherited) under an address-space limit
(``RLIMIT_AS``), a CPU-time limit (``RLIMIT_CPU``) and a wall-clock limit, and one of over
``MAX_PAGES`` pages is refused. Of what it draws, text a reader does not see is not the owner's
text: glyphs drawn invisibly (text render mode 3, or 7: clipping only), white ones, ones under a
point in size, and ones off the page (``visible_page``).
"""

from __future__ import annotations

import multiprocessing
import resource
from collections.abc import Callable

from knowledge.importing.model import SourceError

MAX_PAGES = 50
MEMORY_BYTES = 1024 * 2**20  # the child's address space
CPU_SECONDS = 60
WALL_SECONDS = 90
INVISIBLE = "twinsite:invisible"  # the tag given to a glyph drawn in an invisible render mode


def run_bounded(function: Callable, *args):
    """``function(*args)`` in a child process under the limits; its SourceError comes back as one."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, function, *args), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(WALL_SECONDS):
            raise SourceError(f"the PDF took over {WALL_SECONDS} s to read: not read")
        kind, value = receiver.recv()
    except (EOFError, OSError):
        raise SourceError("the PDF needs more memory or time than an import may use: not read") from None
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()
    if kind == "error":
        raise SourceError(value)
    return value


def _child(sender, function: Callable, *args) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    mark_invisible_render()
    try:
        result = ("ok", function(*args))
    except SourceError as exc:
        result = ("error", str(exc))
    except MemoryError:
        result = ("error", "the PDF needs more memory than an import may use: not read")
    except Exception as exc:
        result = ("error", f"not a readable PDF ({type(exc).__name__})")
    sender.send(result)
    sender.close()


def mark_invisible_render() -> None:
    """pdfminer keeps a glyph's render mode to itself: remember it per string and tag the glyph."""
    from pdfplumber.page import PDFPageAggregatorWithMarkedContent as Aggregator

    if getattr(Aggregator, "_twinsite_marked", False):
        return
    render_string, tag = Aggregator.render_string, Aggregator.tag_cur_item

    def remembering(self, textstate, *args, **kwargs):
        self._twinsite_render = textstate.render
        try:
            return render_string(self, textstate, *args, **kwargs)
        finally:
            self._twinsite_render = 0

    def tagging(self) -> None:
        tag(self)
        if getattr(self, "_twinsite_render", 0) in (3, 7) and self.cur_item._objs:
            self.cur_item._objs[-1].tag = INVISIBLE

    Aggregator.render_string, Aggregator.tag_cur_item = remembering, tagging
    Aggregator._twinsite_marked = True


def visible_page(page) -> tuple[object, str]:
    """The page without the glyphs a reader does not see, and their text."""
    width, height = float(page.width), float(page.height)
    hidden: list[str] = []
    last = [0.0, 0.0]  # the previous hidden glyph's top and right edge: a gap between two is a space

    def shown(obj) -> bool:
        if obj.get("object_type") != "char":
            return True
        seen = (obj.get("tag") != INVISIBLE and float(obj.get("size") or 0) >= 1
                and float(obj["x1"]) > 0 and float(obj["x0"]) < width and float(obj["bottom"]) > 0
                and float(obj["top"]) < height and not _white(obj.get("non_stroking_color")))
        if not seen:
            gap = hidden and (abs(float(obj["top"]) - last[0]) > 1 or float(obj["x0"]) - last[1] > 1)
            hidden.append((" " if gap else "") + (obj.get("text") or ""))
            last[:] = [float(obj["top"]), float(obj["x1"])]
        return seen

    kept = page.filter(shown)
    kept.chars  # noqa: B018  (the filter runs now, filling ``hidden``)
    return kept, "".join(hidden)


def _white(color) -> bool:
    if not isinstance(color, (tuple, list)) or not color or not all(isinstance(c, (int, float)) for c in color):
        return False
    if len(color) == 4:  # CMYK: no ink
        return all(c <= 0.02 for c in color)
    return all(c >= 0.98 for c in color)  # gray or RGB
