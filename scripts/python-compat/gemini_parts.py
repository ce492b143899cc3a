"""What a Gemini agent keeps of a streamed answer: the parts of every chunk, consecutive text parts joined into one."""
from google.genai import types


def streamed_parts(chunks):
    """The parts of a `generate_content_stream` answer, as one model turn: text runs joined, calls as they came."""
    parts = []
    for chunk in chunks:
        for part in chunk.candidates[0].content.parts or []:
            if part.text is not None and parts and parts[-1].text is not None and part.function_call is None and parts[-1].function_call is None:
                parts[-1] = types.Part(text=parts[-1].text + part.text)
            else:
                parts.append(part)
    return parts
