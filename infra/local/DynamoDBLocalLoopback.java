import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Runs DynamoDB Local bound to 127.0.0.1 only, and only as long as its parent lives (ADR 0087).
 *
 * The jar's ServerRunner has no option for the address: its Jetty server listens on every interface.
 * This launcher builds the server with the jar's own command line parser, binds each connector to
 * the loopback address before starting it, and exits when its standard input ends: the parent holds
 * the write end of that pipe, so the pipe closes when the parent exits, however it dies (SIGKILL
 * included), and this JVM goes with it. Run as a single-file source program: java -cp <jar and
 * DynamoDBLocal_lib/*> DynamoDBLocalLoopback.java <the jar's arguments>.
 */
public class DynamoDBLocalLoopback {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("geoplane.dynamodb.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost(host);
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // Anything the parent writes is ignored; only the end of the pipe matters.
        }
      } catch (Exception ignored) {
        // A broken pipe is the parent gone too.
      }
      System.exit(0);
    }, "parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    proxy.start();
    System.out.println("DynamoDB Local listening on " + host + ":" + ((ServerConnector) connectors[0]).getPort());
  }
}
