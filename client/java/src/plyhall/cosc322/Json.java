package plyhall.cosc322;

import java.util.List;
import java.util.Map;

/**
 * A small JSON codec, enough for Plyhall's {@code plyhall.v1.json} subprotocol (no dependencies).
 *
 * <p>Reading gives {@link java.util.LinkedHashMap} for objects, {@link java.util.ArrayList} for arrays,
 * {@link Long} for integers, {@link Double} for other numbers, {@link String}, {@link Boolean} and
 * {@code null}. Writing takes maps, lists, strings, numbers, booleans and {@code null}.
 *
 * <p>Internal to the Plyhall COSC 322 library: not part of the course API.
 */
public final class Json {

    private Json() {
    }

    /** Parses one JSON value; throws {@link IllegalArgumentException} saying where the text is wrong. */
    public static Object parse(String text) {
        return new JsonReader(text).readDocument();
    }

    /** Parses a JSON object (a server message); throws {@link IllegalArgumentException} for anything else. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseObject(String text) {
        Object value = parse(text);
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object, got " + describe(value));
        }
        return (Map<String, Object>) value;
    }

    /** The JSON text of {@code value}. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    /** An integral JSON number as an int; throws {@link IllegalArgumentException} for anything else. */
    public static int toInt(Object value) {
        if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).intValue();
        }
        if (value instanceof Number) {
            double d = ((Number) value).doubleValue();
            if (d == Math.rint(d) && Math.abs(d) < Integer.MAX_VALUE) {
                return (int) d;
            }
        }
        throw new IllegalArgumentException("expected a whole number, got " + describe(value));
    }

    private static String describe(Object value) {
        return value == null ? "null" : value.getClass().getSimpleName() + " " + value;
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            writeString((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("JSON has no NaN or infinity");
            }
            out.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d) + ".0" : Double.toString(d));
        } else if (value instanceof Number) {
            out.append(((Number) value).longValue());
        } else if (value instanceof Map) {
            writeObject((Map<?, ?>) value, out);
        } else if (value instanceof List) {
            writeArray((List<?>) value, out);
        } else if (value instanceof Character) {
            writeString(value.toString(), out);
        } else {
            throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void writeObject(Map<?, ?> map, StringBuilder out) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            writeString(String.valueOf(entry.getKey()), out);
            out.append(':');
            write(entry.getValue(), out);
        }
        out.append('}');
    }

    private static void writeArray(List<?> list, StringBuilder out) {
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            write(list.get(i), out);
        }
        out.append(']');
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"':
                    out.append("\\\"");
                    break;
                case '\\':
                    out.append("\\\\");
                    break;
                case '\n':
                    out.append("\\n");
                    break;
                case '\r':
                    out.append("\\r");
                    break;
                case '\t':
                    out.append("\\t");
                    break;
                case '\b':
                    out.append("\\b");
                    break;
                case '\f':
                    out.append("\\f");
                    break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }
}
