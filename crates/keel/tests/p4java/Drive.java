// Drives a keel server's P4 listener with P4Java (from Maven Central), as a Java CI plugin
// would: one named scenario per run, one JSON object per step on stdout. A step that throws
// prints {"step": NAME, "error": MESSAGE} and the scenario goes on, so the Rust test sees
// every step's outcome.
//
// Usage: java -cp 'LIB/*:OUT' Drive HOST:PORT SCENARIO WORKDIR TICKET
//
// P4Java answers a password prompt only with an MD5 challenge response, which needs the
// password's MD5 on the server: Keel keeps it (sealed) only with p4_password_digests, so
// P4Java authenticates with a ticket (from `keel login -p` or `p4 login -p`), as CI plugins
// configured with a ticket do, or, on such a server, with a password (scenario "password").

import com.perforce.p4java.client.IClient;
import com.perforce.p4java.core.ChangelistStatus;
import com.perforce.p4java.core.IChangelist;
import com.perforce.p4java.core.IChangelistSummary;
import com.perforce.p4java.core.IDepot;
import com.perforce.p4java.core.file.FileSpecBuilder;
import com.perforce.p4java.core.file.IExtendedFileSpec;
import com.perforce.p4java.core.file.IFileRevisionData;
import com.perforce.p4java.core.file.IFileSpec;
import com.perforce.p4java.impl.generic.client.ClientView;
import com.perforce.p4java.impl.generic.core.Changelist;
import com.perforce.p4java.impl.mapbased.client.Client;
import com.perforce.p4java.option.changelist.SubmitOptions;
import com.perforce.p4java.option.client.AddFilesOptions;
import com.perforce.p4java.option.client.EditFilesOptions;
import com.perforce.p4java.option.client.ReconcileFilesOptions;
import com.perforce.p4java.option.client.SyncOptions;
import com.perforce.p4java.option.server.GetChangelistsOptions;
import com.perforce.p4java.option.server.GetExtendedFilesOptions;
import com.perforce.p4java.option.server.GetFileContentsOptions;
import com.perforce.p4java.option.server.GetRevisionHistoryOptions;
import com.perforce.p4java.option.server.OpenedFilesOptions;
import com.perforce.p4java.server.IOptionsServer;
import com.perforce.p4java.server.IServerInfo;
import com.perforce.p4java.server.ServerFactory;
import com.perforce.p4java.server.PerforceCharsets;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

public class Drive {
    static String port;
    static Path work;
    static String ticket;

    interface Step {
        void run(StringBuilder out) throws Exception;
    }

    public static void main(String[] args) throws Exception {
        port = args[0];
        work = Paths.get(args[2]);
        ticket = args[3];
        switch (args[1]) {
            case "basics" -> basics();
            case "daily" -> daily();
            case "password" -> password();
            default -> throw new IllegalArgumentException("no scenario " + args[1]);
        }
    }

    static IOptionsServer connect() throws Exception {
        Properties props = new Properties();
        props.put("com.perforce.p4java.ticketPath", work.resolve("tickets").toString());
        props.put("com.perforce.p4java.trustPath", work.resolve("trust").toString());
        props.put("com.perforce.p4java.programName", "keel-p4java-conformance");
        IOptionsServer s = ServerFactory.getOptionsServer("p4java://" + port, props);
        s.connect();
        s.setUserName("alice");
        return s;
    }

    /** Runs one step and prints its JSON line: fields it added, or the error it threw. */
    static void step(String name, Step body) {
        StringBuilder fields = new StringBuilder();
        String line;
        try {
            body.run(fields);
            line = "{\"step\":" + q(name) + fields + "}";
        } catch (Throwable e) {
            line = "{\"step\":" + q(name) + ",\"error\":" + q(e.getClass().getSimpleName() + ": " + e.getMessage()) + "}";
        }
        System.out.println(line);
        System.out.flush();
    }

    static void put(StringBuilder out, String key, Object value) {
        out.append(',').append(q(key)).append(':');
        if (value == null) {
            out.append("null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) out.append(',');
                out.append(q(String.valueOf(list.get(i))));
            }
            out.append(']');
        } else {
            out.append(q(String.valueOf(value)));
        }
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }

    /** Logging in with a password (the TICKET argument holds it): P4Java answers the prompt's
     *  challenge, which a server setting p4_password_digests checks; then a wrong one. */
    static void password() throws Exception {
        IOptionsServer s = connect();
        step("login", out -> {
            s.login(ticket, new com.perforce.p4java.option.server.LoginOptions());
            put(out, "ticketLength", s.getAuthTicket() == null ? 0 : s.getAuthTicket().length());
        });
        step("changes", out -> put(out, "count",
            s.getChangelists(null, new GetChangelistsOptions()).size()));
        s.disconnect();
        IOptionsServer other = connect();
        step("wrong password", out -> other.login("Wrong-" + ticket,
            new com.perforce.p4java.option.server.LoginOptions()));
        other.disconnect();
    }

    static IOptionsServer server;

    /** Connecting, the server's version, a refusal without a ticket, the ticket proved,
     *  users, depots, and a client spec made and read back. */
    static void basics() throws Exception {
        step("connect", out -> {
            server = connect();
            IServerInfo info = server.getServerInfo();
            put(out, "serverVersion", info.getServerVersion());
            put(out, "versionNumber", server.getServerVersion());
            put(out, "serverRoot", info.getServerRoot());
            put(out, "caseSensitive", info.isCaseSensitive());
            put(out, "unicode", info.isUnicodeEnabled());
        });
        step("no ticket", out -> put(out, "users", server.getUsers(null, 0).size()));
        step("ticket", out -> {
            server.setAuthTicket(ticket);
            put(out, "status", server.getLoginStatus());
            List<String> names = new ArrayList<>();
            for (var u : server.getUsers(null, 0)) names.add(u.getLoginName());
            put(out, "users", names);
        });
        step("depots", out -> {
            List<String> names = new ArrayList<>();
            for (IDepot d : server.getDepots()) names.add(d.getName() + ":" + d.getDepotType());
            put(out, "depots", names);
        });
        step("create client", out -> {
            IClient c = newClient("ci-1");
            put(out, "said", server.createClient(c));
        });
        step("read client", out -> {
            IClient c = server.getClient("ci-1");
            put(out, "root", c.getRoot());
            put(out, "owner", c.getOwnerName());
            List<String> view = new ArrayList<>();
            for (var m : c.getClientView()) view.add(m.toString(" ", true));
            put(out, "view", view);
            put(out, "clients", server.getClients(null).size());
        });
        step("no such command", out -> put(out, "result", server.execMapCmdList("frobnicate", new String[0], null).toString()));
        step("disconnect", out -> {
            server.disconnect();
            put(out, "connected", server.isConnected());
        });
    }

    static IClient newClient(String name) throws Exception {
        Path root = work.resolve(name);
        Files.createDirectories(root);
        Client c = new Client(server);
        c.setName(name);
        c.setRoot(root.toString());
        c.setOwnerName("alice");
        c.setDescription("A build agent's workspace.");
        ClientView view = new ClientView();
        view.addEntry(new ClientView.ClientViewMapping(0, "//depot/...", "//" + name + "/..."));
        c.setClientView(view);
        return c;
    }

    /** A CI plugin's loop: a workspace, files added and submitted, the changes listed, a
     *  second workspace synced, file contents, fstat, filelog, an edit submitted, a new file
     *  reconciled. */
    static void daily() throws Exception {
        server = connect();
        server.setAuthTicket(ticket);
        server.createClient(newClient("dev"));
        IClient dev = server.getClient("dev");
        server.setCurrentClient(dev);
        Path root = Paths.get(dev.getRoot());
        step("add and submit", out -> {
            Files.createDirectories(root.resolve("src"));
            Files.writeString(root.resolve("src/a.txt"), "alpha\n");
            Files.write(root.resolve("src/b.bin"), new byte[] {0, 1, 2, (byte) 0xff});
            IChangelist cl = dev.createChangelist(newChange(dev, "first files"));
            List<IFileSpec> added = dev.addFiles(FileSpecBuilder.makeFileSpecList(
                    root.resolve("src/a.txt").toString(), root.resolve("src/b.bin").toString()),
                    new AddFilesOptions().setChangelistId(cl.getId()));
            put(out, "added", messages(added));
            cl.refresh();
            List<IFileSpec> submitted = cl.submit(new SubmitOptions());
            put(out, "submitted", messages(submitted));
            put(out, "status", server.getChangelist(cl.getId()).getStatus().toString());
        });
        step("changes", out -> {
            List<IChangelistSummary> changes = server.getChangelists(
                    FileSpecBuilder.makeFileSpecList("//depot/..."),
                    new GetChangelistsOptions().setMaxMostRecent(10).setType(IChangelist.Type.SUBMITTED));
            List<String> seen = new ArrayList<>();
            for (IChangelistSummary c : changes) seen.add(c.getId() + " " + c.getUsername() + " " + c.getDescription().trim());
            put(out, "changes", seen);
        });
        step("sync a second workspace", out -> {
            server.createClient(newClient("agent"));
            IClient agent = server.getClient("agent");
            server.setCurrentClient(agent);
            List<IFileSpec> synced = agent.sync(FileSpecBuilder.makeFileSpecList("//agent/..."), new SyncOptions());
            put(out, "synced", messages(synced));
            Path a = Paths.get(agent.getRoot()).resolve("src/a.txt");
            put(out, "content", Files.readString(a));
            put(out, "writable", Files.isWritable(a));
            server.setCurrentClient(dev);
        });
        step("print", out -> {
            try (InputStream in = server.getFileContents(FileSpecBuilder.makeFileSpecList("//depot/src/a.txt"),
                    new GetFileContentsOptions().setNoHeaderLine(true))) {
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                in.transferTo(b);
                put(out, "content", b.toString(StandardCharsets.UTF_8));
            }
        });
        step("fstat", out -> {
            List<IExtendedFileSpec> files = server.getExtendedFiles(
                    FileSpecBuilder.makeFileSpecList("//depot/src/..."), new GetExtendedFilesOptions());
            List<String> seen = new ArrayList<>();
            for (IExtendedFileSpec f : files) seen.add(f.getDepotPathString() + "#" + f.getHeadRev() + " " + f.getHeadType());
            put(out, "files", seen);
        });
        step("edit and submit", out -> {
            IChangelist cl = dev.createChangelist(newChange(dev, "second"));
            dev.editFiles(FileSpecBuilder.makeFileSpecList("//dev/src/a.txt"),
                    new EditFilesOptions().setChangelistId(cl.getId()));
            Path a = root.resolve("src/a.txt");
            Files.writeString(a, "alpha\nbeta\n");
            cl.refresh();
            put(out, "submitted", messages(cl.submit(new SubmitOptions())));
        });
        step("reconcile", out -> {
            Files.writeString(root.resolve("src/c.txt"), "gamma\n");
            List<IFileSpec> found = dev.reconcileFiles(
                    FileSpecBuilder.makeFileSpecList("//dev/..."), new ReconcileFilesOptions());
            put(out, "reconciled", messages(found));
            // A file opened for add carries the revision it works on as workRev (P4 servers
            // send no rev or haveRev for it, so getEndRevision() stays -1).
            put(out, "workRevs", workRevs(found));
        });
        step("opened", out -> {
            List<IFileSpec> open = dev.openedFiles(
                    FileSpecBuilder.makeFileSpecList("//dev/..."), new OpenedFilesOptions());
            put(out, "opened", messages(open));
            List<IExtendedFileSpec> files = server.getExtendedFiles(
                    FileSpecBuilder.makeFileSpecList("//dev/src/c.txt"), new GetExtendedFilesOptions());
            List<String> seen = new ArrayList<>();
            for (IExtendedFileSpec f : files)
                seen.add(f.getDepotPathString() + "#" + f.getWorkRev() + " " + f.getAction() + " head " + f.getHeadRev());
            put(out, "fstat", seen);
        });
        step("filelog", out -> {
            Map<IFileSpec, List<IFileRevisionData>> log = server.getRevisionHistory(
                    FileSpecBuilder.makeFileSpecList("//depot/src/a.txt"), new GetRevisionHistoryOptions());
            List<String> seen = new ArrayList<>();
            for (List<IFileRevisionData> revs : log.values())
                for (IFileRevisionData r : revs) seen.add("#" + r.getRevision() + " " + r.getAction() + " " + r.getChangelistId());
            put(out, "revisions", seen);
        });
        server.disconnect();
    }

    static Changelist newChange(IClient client, String description) {
        return new Changelist(IChangelist.UNKNOWN, client.getName(), "alice",
                ChangelistStatus.NEW, null, description, false, (com.perforce.p4java.impl.mapbased.server.Server) server);
    }

    /** Each opened file's path, workRev and action. */
    static List<String> workRevs(List<IFileSpec> specs) {
        List<String> out = new ArrayList<>();
        for (IFileSpec f : specs)
            if (f != null && f.getStatusMessage() == null)
                out.add(f.getDepotPathString() + "#" + f.getWorkRev() + " " + f.getAction());
        return out;
    }

    /** Each file spec as its path or its message, as a plugin would log them. */
    static List<String> messages(List<IFileSpec> specs) {
        List<String> out = new ArrayList<>();
        for (IFileSpec f : specs) {
            if (f == null) continue;
            String text = f.getStatusMessage() == null ? null : f.getStatusMessage().toString();
            out.add(text != null ? f.getOpStatus() + ": " + text
                    : f.getDepotPathString() + "#" + f.getEndRevision() + " " + f.getAction());
        }
        return out;
    }
}
