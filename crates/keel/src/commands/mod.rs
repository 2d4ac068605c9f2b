//! Dispatch from the parsed command line to the verb implementations.

pub(crate) mod access;
pub(crate) mod admin;
pub(crate) mod annotate;
pub(crate) mod backup;
pub(crate) mod bench;
mod branches;
pub(crate) mod browse;
mod clean;
pub(crate) mod configure;
pub(crate) mod counters;
mod diff;
mod file_results;
pub(crate) mod generate;
pub(crate) mod grep;
mod ignores;
mod integrate;
pub(crate) mod interchanges;
pub(crate) mod istat;
pub(crate) mod jobs;
mod labels;
mod locks;
pub(crate) mod log_report;
pub(crate) mod login;
pub(crate) mod monitor;
pub(crate) mod obliterate;
pub(crate) mod open;
mod opened_content;
pub(crate) mod populate;
pub(crate) mod probe;
pub(crate) mod proxy;
mod reconcile;
mod records;
mod resolve;
mod revert;
pub(crate) mod serve;
pub(crate) mod shelve;
pub(crate) mod sizes;
mod spec_form;
mod submit;
pub(crate) mod sync;
pub(crate) mod triggers;
pub(crate) mod trust;
pub(crate) mod typemap;
pub(crate) mod undo;
pub(crate) mod users;
pub(crate) mod verify;
mod watch;
pub(crate) mod webhooks;
mod workspace;
mod workspace_clone;

use anyhow::Result;
use keel_client::ops::IntegrateMode;

use crate::cli::{Cli, ClientCommand as C, Command};
use crate::session::Session;

/// Runs one command line that is not server-side (`Command::server_side`).
pub async fn run(cli: Cli) -> Result<()> {
    let mut s = match &cli.command {
        Command::Admin(backup::AdminCmd::LogReport(_)) => {
            let Command::Admin(backup::AdminCmd::LogReport(args)) = cli.command else {
                return Ok(());
            };
            let mut out = crate::output::Out::new(cli.globals.json);
            out.quiet = cli.globals.quiet;
            return log_report::run(&out, args);
        }
        Command::Admin(backup::AdminCmd::Checkpoint) => {
            let mut s = Session::connect(&cli.globals).await?;
            return backup::checkpoint(&mut s).await;
        }
        Command::Generate(what) => return generate::run(what),
        Command::Trust(args) => return trust::run(&cli, args).await,
        Command::Tickets => return login::list_tickets(&cli),
        Command::Set => return login::list_settings(&cli),
        Command::MaxResults
        | Command::MaxScanRows
        | Command::MaxLockTime
        | Command::MaxOpenFiles => {
            return access::limit_help(&cli.command);
        }
        Command::Serve(_)
        | Command::Bench(_)
        | Command::Proxy(_)
        | Command::Admin(backup::AdminCmd::Restore(_)) => {
            anyhow::bail!("this command runs in keel-server (crate::server_side)")
        }
        Command::Client(_) => Session::connect(&cli.globals).await?,
    };
    let Command::Client(command) = cli.command else {
        return Ok(());
    };
    match command {
        C::Info => admin::info(&mut s).await,
        C::Depots => admin::depots(&mut s).await,
        C::Depot(cmd) => admin::depot(&mut s, cmd).await,
        C::Workspace(cmd) => workspace::run(&mut s, cmd).await,
        C::Add(args) => open::add(&mut s, args).await,
        C::Edit(args) => open::edit(&mut s, args).await,
        C::Delete(args) => open::delete(&mut s, args).await,
        C::Move(args) => open::move_file(&mut s, args).await,
        C::Reopen(args) => open::reopen(&mut s, args).await,
        C::Opened(args) => open::opened(&mut s, args).await,
        C::Revert(args) => revert::revert(&mut s, args).await,
        C::Where(args) => sync::where_(&mut s, args).await,
        C::Have(args) => sync::have(&mut s, args).await,
        C::Sync(args) => sync::sync(&mut s, args).await,
        C::Status(args) => reconcile::status(&mut s, args).await,
        C::Reconcile(args) => reconcile::reconcile(&mut s, args).await,
        C::Ignores(args) => ignores::ignores(&mut s, args).await,
        C::Clean(args) => clean::clean(&mut s, args).await,
        C::Flush(args) => clean::flush(&mut s, args).await,
        C::Lock(args) => locks::lock(&mut s, args).await,
        C::Unlock(args) => locks::unlock(&mut s, args).await,
        C::Change(args) => submit::change(&mut s, args).await,
        C::Submit(args) => submit::submit(&mut s, args).await,
        C::Changes(args) => browse::changes(&mut s, args).await,
        C::Watch(args) => watch::watch(&mut s, args).await,
        C::Describe(args) => browse::describe(&mut s, args).await,
        C::Files(args) => browse::files(&mut s, args).await,
        C::Dirs(args) => browse::dirs(&mut s, args).await,
        C::Fstat(args) => browse::fstat(&mut s, args).await,
        C::Filelog(args) => browse::filelog(&mut s, args).await,
        C::Annotate(args) => annotate::annotate(&mut s, args).await,
        C::Undo(args) => undo::undo(&mut s, args).await,
        C::Print(args) => browse::print(&mut s, args).await,
        C::Diff(args) => diff::diff(&mut s, args).await,
        C::Diff2(args) => diff::diff2(&mut s, args).await,
        C::Integrate(args) | C::Merge(args) => {
            integrate::integrate(&mut s, args, IntegrateMode::Integrate).await
        }
        C::Copy(args) => integrate::integrate(&mut s, args, IntegrateMode::Copy).await,
        C::Resolve(args) => resolve::resolve(&mut s, args).await,
        C::Resolved(args) => resolve::resolved(&mut s, args.files).await,
        C::Integrated(args) => integrate::integrated(&mut s, args.files).await,
        C::Shelve(args) => shelve::shelve(&mut s, args).await,
        C::Unshelve(args) => shelve::unshelve(&mut s, args).await,
        C::Obliterate(args) => obliterate::obliterate(&mut s, args).await,
        C::Label(cmd) => labels::run(&mut s, cmd).await,
        C::Labels => labels::list(&mut s).await,
        C::Tag(args) => labels::tag(&mut s, args).await,
        C::Labelsync(args) => labels::labelsync(&mut s, args).await,
        C::Branch(cmd) => branches::run(&mut s, cmd).await,
        C::Branches => branches::list(&mut s).await,
        C::Group(args) => access::group(&mut s, args).await,
        C::Groups(args) => access::groups(&mut s, args).await,
        C::Protect(args) => access::protect(&mut s, args).await,
        C::Protects(args) => access::protects(&mut s, args).await,
        C::Verify(args) => verify::verify(&mut s, args).await,
        C::Probe(args) => probe::probe(&mut s, args).await,
        C::Triggers(args) => triggers::triggers(&mut s, args).await,
        C::Typemap(args) => typemap::typemap(&mut s, args).await,
        C::Webhooks(args) => webhooks::webhooks(&mut s, args).await,
        C::Login(args) => login::login(&mut s, args).await,
        C::Logout(args) => login::logout(&mut s, args).await,
        C::Passwd(args) => login::passwd(&mut s, args).await,
        C::User(args) => users::user(&mut s, args).await,
        C::Users => users::users(&mut s).await,
        C::Configure(cmd) => configure::run(&mut s, cmd).await,
        C::Monitor(cmd) => monitor::run(&mut s, cmd).await,
        C::Jobspec(args) => jobs::jobspec(&mut s, args).await,
        C::Spec(args) => jobs::spec(&mut s, args).await,
        C::Job(args) => jobs::job(&mut s, args).await,
        C::Jobs(args) => jobs::jobs(&mut s, args).await,
        C::Fix(args) => jobs::fix(&mut s, args).await,
        C::Fixes(args) => jobs::fixes(&mut s, args).await,
        C::Counter(args) => counters::counter(&mut s, args).await,
        C::Counters(args) => counters::counters(&mut s, args).await,
        C::Key(args) => counters::key(&mut s, args).await,
        C::Keys(args) => counters::keys(&mut s, args).await,
        C::Review(args) => counters::review(&mut s, args).await,
        C::Reviews(args) => counters::reviews(&mut s, args).await,
        C::Interchanges(args) => interchanges::interchanges(&mut s, args).await,
        C::Cstat(args) => interchanges::cstat(&mut s, args).await,
        C::Sizes(args) => sizes::sizes(&mut s, args).await,
        C::Grep(args) => grep::grep(&mut s, args).await,
        C::Populate(args) => populate::populate(&mut s, args).await,
        C::Istat(args) => istat::istat(&mut s, args).await,
        C::Prune(args) => istat::prune(&mut s, args).await,
    }
}
