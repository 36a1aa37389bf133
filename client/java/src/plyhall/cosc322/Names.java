package plyhall.cosc322;

import java.util.regex.Pattern;

/**
 * Course user names on Plyhall. Plyhall names are 1 to 32 letters, digits and {@code _ . -}, starting with
 * a letter or digit; a course name that is not (it has a space, say) logs in under a cleaned-up name, while
 * the bot keeps seeing its own name everywhere ({@code getUserName()}, {@code player-black}, ...).
 */
public final class Names {

    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.\\-]{0,31}");
    private static final int MAX_LENGTH = 32;

    private Names() {
    }

    /** True when Plyhall accepts {@code name} as it is. */
    public static boolean valid(String name) {
        return name != null && VALID.matcher(name).matches();
    }

    /** The Plyhall name for a course name: the name itself when valid, else a cleaned-up form. */
    public static String toWire(String name) {
        if (valid(name)) {
            return name;
        }
        StringBuilder out = new StringBuilder();
        String source = name == null ? "" : name.trim();
        for (int i = 0; i < source.length() && out.length() < MAX_LENGTH; i++) {
            char c = source.charAt(i);
            boolean ok = c < 128 && (Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '-');
            out.append(ok ? c : '_');
        }
        if (out.length() == 0 || !Character.isLetterOrDigit(out.charAt(0))) {
            out.insert(0, 'p');
        }
        if (out.length() > MAX_LENGTH) {
            out.setLength(MAX_LENGTH);
        }
        return out.toString();
    }
}
