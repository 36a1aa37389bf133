package plyhall.cosc322;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The library's version, written into the jar by {@code plyhall cosc322 jar} ("dev" when run from sources). */
public final class Version {

    /** The resource {@code plyhall cosc322 jar} writes at the root of the jar. */
    public static final String RESOURCE = "/plyhall-cosc322.properties";

    private Version() {
    }

    /** The version, e.g. {@code 0.1.0}. */
    public static String get() {
        try (InputStream in = Version.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                return properties.getProperty("version", "dev");
            }
        } catch (IOException e) {
            // fall through
        }
        return "dev";
    }

    /** What the library tells the server it is, in {@code login.client}. */
    public static String client() {
        return "plyhall-cosc322/" + get() + " (Java " + System.getProperty("java.version") + ")";
    }
}
