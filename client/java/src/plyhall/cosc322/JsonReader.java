package plyhall.cosc322;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The parser behind {@link Json#parse}: a recursive descent over one JSON document (RFC 8259), with a
 * nesting limit so that a hostile message cannot exhaust the stack.
 */
final class JsonReader {

    private static final int MAX_DEPTH = 64;

    private final String text;
    private int pos;

    JsonReader(String text) {
        this.text = text;
    }

    /** The one value of the document; only white space may follow it. */
    Object readDocument() {
        skipSpace();
        Object value = readValue(0);
        skipSpace();
        if (pos < text.length()) {
            throw error("unexpected text after the value");
        }
        return value;
    }

    private Object readValue(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nested deeper than " + MAX_DEPTH + " levels");
        }
        if (pos >= text.length()) {
            throw error("unexpected end of the text");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return readObject(depth);
            case '[':
                return readArray(depth);
            case '"':
                return readString();
            case 't':
                return readWord("true", Boolean.TRUE);
            case 'f':
                return readWord("false", Boolean.FALSE);
            case 'n':
                return readWord("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return readNumber();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Map<String, Object> readObject(int depth) {
        Map<String, Object> map = new LinkedHashMap<>();
        pos++; // '{'
        skipSpace();
        if (peek() == '}') {
            pos++;
            return map;
        }
        while (true) {
            skipSpace();
            if (peek() != '"') {
                throw error("expected a string key");
            }
            String key = readString();
            skipSpace();
            expect(':');
            skipSpace();
            map.put(key, readValue(depth + 1));
            skipSpace();
            char c = next();
            if (c == '}') {
                return map;
            }
            if (c != ',') {
                throw error("expected ',' or '}' in an object");
            }
        }
    }

    private List<Object> readArray(int depth) {
        List<Object> list = new ArrayList<>();
        pos++; // '['
        skipSpace();
        if (peek() == ']') {
            pos++;
            return list;
        }
        while (true) {
            skipSpace();
            list.add(readValue(depth + 1));
            skipSpace();
            char c = next();
            if (c == ']') {
                return list;
            }
            if (c != ',') {
                throw error("expected ',' or ']' in an array");
            }
        }
    }

    private String readString() {
        expect('"');
        StringBuilder out = new StringBuilder();
        while (true) {
            char c = next();
            if (c == '"') {
                return out.toString();
            }
            if (c == '\\') {
                readEscape(out);
            } else if (c < 0x20) {
                throw error("control character in a string");
            } else {
                out.append(c);
            }
        }
    }

    private void readEscape(StringBuilder out) {
        char c = next();
        switch (c) {
            case '"':
            case '\\':
            case '/':
                out.append(c);
                break;
            case 'b':
                out.append('\b');
                break;
            case 'f':
                out.append('\f');
                break;
            case 'n':
                out.append('\n');
                break;
            case 'r':
                out.append('\r');
                break;
            case 't':
                out.append('\t');
                break;
            case 'u':
                if (pos + 4 > text.length()) {
                    throw error("short \\u escape");
                }
                try {
                    out.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                } catch (NumberFormatException e) {
                    throw error("bad \\u escape");
                }
                pos += 4;
                break;
            default:
                throw error("bad escape '\\" + c + "'");
        }
    }

    private Object readNumber() {
        int start = pos;
        boolean integral = true;
        if (peek() == '-') {
            pos++;
        }
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c >= '0' && c <= '9') {
                pos++;
            } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                integral = false;
                pos++;
            } else {
                break;
            }
        }
        String number = text.substring(start, pos);
        try {
            if (integral) {
                return Long.parseLong(number);
            }
            return Double.parseDouble(number);
        } catch (NumberFormatException e) {
            throw error("bad number '" + number + "'");
        }
    }

    private Object readWord(String word, Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("unexpected word");
        }
        pos += word.length();
        return value;
    }

    private void skipSpace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private char peek() {
        return pos < text.length() ? text.charAt(pos) : '\0';
    }

    private char next() {
        if (pos >= text.length()) {
            throw error("unexpected end of the text");
        }
        return text.charAt(pos++);
    }

    private void expect(char c) {
        if (next() != c) {
            pos--;
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("bad JSON at character " + pos + ": " + what);
    }
}
